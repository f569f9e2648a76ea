// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/device"
	"github.com/repro-dp/repro/pretrain"
)

func init() { register(pretrainCommand) }

func pretrainCommand() *cli.Command {
	return &cli.Command{
		Name:  "pretrain",
		Usage: "build, or load from the cache, a preset's pretrained base model",
		Description: "Trains the base model of a preset on the public data mixture only (captions and\n" +
			"VQA on public images, coarse labels, public text records, in-context episodes with\n" +
			"random label words), measures it on public held-out data, and caches it under\n" +
			"DIR/pretrain/ARCH-SCALE-KEY/ (model.safetensors, manifest.json), keyed by a hash of\n" +
			"its whole configuration. Later calls, and every fine-tuning run, load the cached\n" +
			"base; --fresh rebuilds it. Rebuilding gives the same checkpoint hash.\n\n" +
			"Stages (TinyMLLM): vision encoder, in-context episodes, the whole mixture. On two\n" +
			"cores smoke takes about 10 s and small about 5 minutes; full is for bigger machines.\n\n" +
			"--patch N builds the many-patch variant of a preset (the preset with N-pixel patches,\n" +
			"the same recipe), cached as ARCH-SCALE-pN-KEY; a spec selects it with the sweep axis\n" +
			"vision_patch. Small with --patch 4 sees 49 patches an image instead of 16.\n\n" +
			"--scenes builds the scenes variant (the vision encoder also learns the colours and\n" +
			"shapes of public shapes-vqa scene objects), cached as ARCH-SCALE-scenes-KEY; a spec\n" +
			"selects it with the sweep axis vision_scenes. --shapes-questions builds the variant whose\n" +
			"mixture also holds public shapes-vqa questions of every kind, cached as ARCH-SCALE-shapesqa-KEY;\n" +
			"a spec selects it with the sweep axis shapes_questions. --captions builds the variant with a\n" +
			"captions-only stage before the mixture (LLaVA's feature alignment), cached as ARCH-SCALE-captions-KEY;\n" +
			"--cell-captions the same stage on cell-first captions (\"at the top left a red circle and at the top\n" +
			"right nothing …\"), which the mixture keeps too, cached as ARCH-SCALE-cellcaps-KEY (--caption-scale N:\n" +
			"N times the steps, -cellcapsxN; --caption-vision: the encoder trained too, a \"v\" after; --cell-form F:\n" +
			"the descriptions in form F, \"-F\" after).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scale", Value: "small", Usage: "size `preset`: smoke, small or full"},
			&cli.StringFlag{Name: "arch", Value: "tinymllm", Usage: "base model: `tinymllm`, vit, cnn, cnn-gn or fusion"},
			&cli.StringFlag{Name: "image-encoder", Usage: "fusion only: image encoder `mlp` (the default) or cnn"},
			&cli.StringFlag{Name: "fusion-mode", Usage: "fusion only: `late` (the default) or early fusion"},
			&cli.IntFlag{Name: "patch", Usage: "tinymllm only: patch side `N` in pixels instead of the preset's (4: 49 patches an image at small)"},
			&cli.BoolFlag{Name: "shapes-questions", Usage: "tinymllm only: the mixture also holds public shapes-vqa questions of every kind"},
			&cli.BoolFlag{Name: "captions", Usage: "tinymllm only: a captions-only stage (public scene and item captions; projector and language model, the encoder frozen) before the mixture, as LLaVA's feature-alignment stage"},
			&cli.BoolFlag{Name: "cell-captions", Usage: "tinymllm only: the captions-only stage on cell-first scene captions (\"at the top left a red circle and at the top right nothing …\"), so each colour and shape word follows the name of its cell"},
			&cli.IntFlag{Name: "caption-scale", Usage: "with --cell-captions: the stage runs `N` times the mixture's steps (0: as many)"},
			&cli.StringFlag{Name: "cell-form", Usage: "with --cell-captions: the descriptions' `form`, \"+\"-joined parts among shuffled (the cells in a random order), single (one named cell a sequence), questions (public colour-at and shape-at questions about every cell) and fresh (with another part: public layouts drawn afresh for every pass in place of the public split's scenes); empty: the cells in their fixed order"},
			&cli.BoolFlag{Name: "caption-vision", Usage: "with --cell-captions: the stage trains the vision encoder too"},
			&cli.BoolFlag{Name: "scenes", Usage: "tinymllm only: the vision encoder also learns public scene objects' colours and shapes"},
			&cli.StringFlag{Name: "results", Value: "results", Usage: "results directory `DIR`; the cache is DIR/pretrain"},
			&cli.BoolFlag{Name: "fresh", Usage: "rebuild even if the cache holds the base"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "pretraining seed `N`"},
			&cli.StringFlag{Name: "data-dir", Usage: "read the full Fashion-MNIST release from `DIR`"},
			&cli.StringFlag{Name: "device", Value: "cpu", Usage: "train on `device`: cpu, or cuda (an NVIDIA GPU; needs a binary built with make cuda-build); not part of the cache key"},
			&cli.BoolFlag{Name: "probe", Usage: "tinymllm only: also fit linear probes that read each scene cell's colour and shape from the frozen visual features (shapes-vqa-tune: its training scenes, scored on its validation scenes), score the base's captions of held-out public scenes object by object, and show where the language model attends when it names their colours"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON object (checkpoint, hash, metrics, ...)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on standard error"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return fmt.Errorf("pretrain: unexpected arguments %q", c.Args().Slice())
			}
			opt := pretrainOptions(c)
			if (opt.ImageEncoder != "" || opt.FusionMode != "") && opt.Arch != "fusion" {
				return fmt.Errorf("pretrain: --image-encoder and --fusion-mode shape the fusion base only, not %s", opt.Arch)
			}
			dev := c.String("device")
			if err := device.Use(dev); err != nil {
				return fmt.Errorf("pretrain: --device %s: %w", dev, err)
			}
			if !c.Bool("quiet") {
				opt.Progress = c.App.ErrWriter
			}
			r, err := pretrain.Base(c.Context, opt)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writePretrainJSON(c.App.Writer, r, dev)
			}
			if !r.Cached {
				fmt.Fprintf(c.App.Writer, "device %s\n", device.Describe())
			}
			if err := r.WriteText(c.App.Writer); err != nil {
				return err
			}
			if c.Bool("probe") {
				return probeBase(c.App.Writer, r, opt)
			}
			return nil
		},
	}
}

// pretrainOptions reads pretrain's flags into the options of pretrain.Base.
func pretrainOptions(c *cli.Context) pretrain.Options {
	return pretrain.Options{
		Scale:  c.String("scale"),
		Arch:   c.String("arch"),
		Dir:    filepath.Join(c.String("results"), "pretrain"),
		Fresh:  c.Bool("fresh"),
		Seed:   c.Uint64("seed"),
		Patch:  c.Int("patch"),
		Scenes: c.Bool("scenes"),

		ShapesQuestions: c.Bool("shapes-questions"),
		Captions:        c.Bool("captions"),
		CellCaptions:    c.Bool("cell-captions"),
		CaptionScale:    c.Int("caption-scale"),
		CaptionVision:   c.Bool("caption-vision"),
		CellForm:        c.String("cell-form"),
		DataDir:         c.String("data-dir"),

		ImageEncoder: c.String("image-encoder"),
		FusionMode:   c.String("fusion-mode"),
	}
}

// probeBase prints the linear probes of pretrain.ProbeScenes on the
// TinyMLLM base r: fitted on the training scenes of shapes-vqa-tune at the
// base's scale and seed (public scenes), scored on its validation scenes
// (public scenes held out of pretraining).
func probeBase(w io.Writer, r *pretrain.Result, opt pretrain.Options) error {
	m := r.TinyMLLM()
	if m == nil {
		return fmt.Errorf("pretrain: --probe needs a tinymllm base, not %s", r.Manifest.Arch)
	}
	d, err := datasets.Build("shapes-vqa"+datasets.TuneSuffix, &datasets.Options{Scale: datasets.Scale(opt.Scale), Seed: opt.Seed, DataDir: opt.DataDir})
	if err != nil {
		return err
	}
	probes, err := pretrain.ProbeScenes(m, d.Private, d.Test)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := pretrain.WriteProbes(w, probes); err != nil {
		return err
	}
	cs, err := pretrain.Captions(m, d.Public)
	if err != nil {
		return err
	}
	colours, shapes := datasets.SceneAttributes()
	_, err = fmt.Fprintf(w, "\ncaptions of %d held-out public scenes (%d objects): object count right %.1f%%, object in its cell %.1f%%, colour right there %.1f%% (chance %.1f%%), shape %.1f%% (chance %.1f%%)\n",
		cs.Captions, cs.Objects, 100*cs.Count, 100*cs.Position, 100*cs.Colour, 100/float64(colours), 100*cs.Shape, 100/float64(shapes))
	if err != nil {
		return err
	}
	shares, area, err := pretrain.CaptionAttention(m, d.Public)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nattention of the positions that predict the captions' colour words (mean over heads and words; the object's cell is %.0f%% of the patches)\n", 100*area)
	fmt.Fprintf(w, "%-6s %9s %13s %6s %6s %18s\n", "block", "own cell", "other patches", "[CLS]", "text", "own / all patches")
	for _, s := range shares {
		fmt.Fprintf(w, "%-6d %9.3f %13.3f %6.3f %6.3f %17.1f%%\n", s.Block+1, s.Own, s.Other, s.CLS, s.Text, 100*s.Own/(s.Own+s.Other))
	}
	for _, form := range pretrain.CellProbeForms {
		cc, err := pretrain.CellProbe(m, d.Public, form)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\neach cell of the same scenes named first, %s, teacher-forced (%d objects): occupied or not right %.1f%% of cells, colour right %.1f%% (chance %.1f%%), shape %.1f%% (chance %.1f%%)\n",
			cellFormText[form], cc.Objects, 100*cc.Occupied, 100*cc.Colour, 100/float64(colours), 100*cc.Shape, 100/float64(shapes))
		fmt.Fprintf(w, "attention of the positions that predict their colour words (the named cell is %.0f%% of the patches)\n", 100*cc.Area)
		fmt.Fprintf(w, "%-6s %9s %13s %6s %6s %18s\n", "block", "own cell", "other patches", "[CLS]", "text", "own / all patches")
		for _, s := range cc.Attention {
			fmt.Fprintf(w, "%-6d %9.3f %13.3f %6.3f %6.3f %17.1f%%\n", s.Block+1, s.Own, s.Other, s.CLS, s.Text, 100*s.Own/(s.Own+s.Other))
		}
	}
	return nil
}

// cellFormText says how each form of pretrain.CellProbe names the cells.
var cellFormText = map[string]string{
	pretrain.CellOrdered:  "cell-first descriptions in the fixed order",
	pretrain.CellShuffled: "cell-first descriptions with the cells in a random order",
	pretrain.CellAlone:    "one cell a sequence (\"what is at the top left ?\")",
	pretrain.CellQuestion: "colour-at and shape-at questions",
}

// writePretrainJSON prints the result for scripts: at least checkpoint,
// hash and metrics, and the device that trained the base when this call
// built it (dev; empty for a base from the cache, whose device the cache
// does not record).
func writePretrainJSON(w io.Writer, r *pretrain.Result, dev string) error {
	if r.Cached {
		dev = ""
	}
	m := r.Manifest
	out := struct {
		Checkpoint string             `json:"checkpoint"`
		Hash       string             `json:"hash"`
		Cached     bool               `json:"cached"`
		Key        string             `json:"key"`
		Arch       string             `json:"arch"`
		Scale      string             `json:"scale"`
		Seed       uint64             `json:"seed"`
		Manifest   string             `json:"manifest"`
		Metrics    map[string]float64 `json:"metrics"`
		Chance     map[string]float64 `json:"chance"`
		Timings    pretrain.Timings   `json:"timings"`
		Device     string             `json:"device,omitempty"`
	}{r.Checkpoint, r.Hash, r.Cached, m.Key, m.Arch, m.Scale, m.Seed, r.ManifestPath(), m.Metrics, m.Chance, m.Timings, dev}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(out)
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/repro-dp/repro/datasets"
)

// Plan is the training recipe of one base model at one scale: everything
// about pretraining that is not the model configuration, the data or the
// seed. It is part of the cache key.
type Plan struct {
	// LMLayers, when positive, replaces the preset's number of language
	// model blocks (smoke: 2 instead of 1, the depth its recipe was tuned
	// at).
	LMLayers int `json:"lm_layers,omitempty"`
	// VisionSteps is the length of stage 1: the vision encoder, with a
	// linear head on its [CLS] token, is trained to classify the public
	// Fashion-MNIST training images into their ten classes (VisionBatch
	// images per step, AdamW at VisionLR). The head is then dropped (LLaVA
	// likewise starts from a pretrained vision encoder). Gradients through
	// the language model reach the vision encoder far more slowly, so
	// without this stage the base learns little about the images.
	VisionSteps int     `json:"vision_steps"`
	VisionBatch int     `json:"vision_batch"`
	VisionLR    float64 `json:"vision_lr"`
	// VisionScenes, when positive, adds that many images of public
	// shapes-vqa scenes to every stage-1 batch, each one object of a
	// public training scene alone (datasets.CellImage), classified into
	// its colour and shape (datasets.SceneObjectClasses more classes after
	// the ten fashion classes). Without it the encoder sees only
	// grey-scale Fashion-MNIST items, is frozen after stage 1, and the
	// scenes' colours and shapes barely reach the language model (fine-tuned
	// on shapes-vqa, the small base answers its colour questions and its
	// counts by colour or shape with their majority answers, while it
	// counts objects correctly; docs/dualpriv.md).
	// LLaVA's encoder, CLIP, was trained on images of every kind. Options.Scenes
	// sets it to half of VisionBatch; the presets leave it 0.
	VisionScenes int `json:"vision_scenes,omitempty"`
	// ICLSteps is the length of stage 2, the in-context stage: the
	// projector and the language model learn from ICLBatch in-context
	// episodes per step (AdamW at ICLLR), each image entering as its [CLS]
	// token alone, with the vision encoder frozen. Short episodes (about
	// 3 tokens a demonstration instead of 19) let the language model find
	// the match-and-copy circuit in a few hundred steps; with every visual
	// token it stays on the plateau far longer, and training the vision
	// encoder at the same time keeps it there (docs/engine.md,
	// "Engineering notes").
	ICLSteps int     `json:"icl_steps"`
	ICLBatch int     `json:"icl_batch"`
	ICLLR    float64 `json:"icl_lr"`
	// CaptionSteps, when positive, adds a captions-only stage between the
	// in-context stage and the mixture, as LLaVA's first stage (feature
	// alignment: "Visual Instruction Tuning", NeurIPS 2023): CaptionParts
	// of the TinyMLLM ("projector", or "projector" and "lm"; the vision
	// encoder stays frozen) learn for CaptionSteps steps of CaptionBatch
	// public captions (AdamW at CaptionLR, warm-up and cosine as the other
	// stages) with every visual token: the captions of every public
	// shapes-vqa scene that pretraining trains on (datasets.SceneCaption,
	// those the public split asks a question about as well) and the public
	// fashion-vqa captions, in one pool whose order is reshuffled after
	// every pass. Without it the mixture holds about one scene caption a
	// step at small and the base captions held-out scenes with their
	// colours and shapes at chance although its visual tokens tell them
	// apart (docs/dualpriv.md). Options.Captions sets it (WithCaptions);
	// the presets leave it 0.
	CaptionSteps int      `json:"caption_steps,omitempty"`
	CaptionBatch int      `json:"caption_batch,omitempty"`
	CaptionLR    float64  `json:"caption_lr,omitempty"`
	CaptionParts []string `json:"caption_parts,omitempty"`
	// CaptionCells, with CaptionSteps, makes the stage's scene captions
	// cell-first (datasets.SceneCellCaption after
	// datasets.SceneCellPrompt: "at the top left a red circle and at the
	// top right nothing and …", every cell in order), so that each colour
	// and shape word follows the words that name its cell and a word's
	// target depends on that cell's patches alone: the position → patch
	// binding that naming an object's colour needs, which the preset's
	// captions (colour first, cell after) do not reward directly. The
	// cells come in a fixed order, so the order alone can tell which
	// cell a slot describes, and at smoke that is what the model learns
	// (docs/dualpriv.md). It follows the region-description task of
	// Shikra ("Shikra: Unleashing Multimodal LLM's Referential Dialogue
	// Magic", arXiv 2023), where the region is named, in words, before
	// the model describes what it holds. Options.CellCaptions sets it
	// (WithCellCaptions).
	CaptionCells bool `json:"caption_cells,omitempty"`
	// CaptionForm, with CaptionCells, replaces the fixed-order
	// descriptions of the stage and of the mixture with forms in which
	// only a cell's words, not its place in the text, say which cell is
	// described (WithCellForm): "+"-joined parts among "shuffled" (the
	// description with the cells in a random order, drawn afresh for
	// every pass over the scenes; datasets.SceneCellOrderCaption),
	// "single" (one named cell a sequence, "what is at the bottom right
	// ?" → "a red circle", every cell of every scene;
	// datasets.SceneOneCell) and "questions" (shapes-vqa's colour-at and
	// shape-at questions about every cell of every public scene, in the
	// private task's words; datasets.SceneAtQuestion), and "fresh", with
	// one of them: the scenes are not the public split's, about which
	// the stage's thousands of steps can memorise every answer, but as
	// many public layouts drawn afresh for every pass
	// (datasets.NewPublicScene). "" keeps the fixed order. The scenes
	// are public layouts pretraining may train on, never a private or
	// held-out one.
	CaptionForm string `json:"caption_form,omitempty"`
	// Steps is the number of optimizer steps of stage 3, when the
	// projector and the language model train on the mixture with every
	// visual token, but for the share PruneShare of it (the vision encoder
	// stays frozen, as LLaVA's does).
	Steps int `json:"steps"`
	// PruneShare, when positive, turns on stage 3's token-dropping
	// augmentation: each image-carrying sequence of a batch is, with
	// probability PruneShare, trained with its images' visual tokens
	// passed through Dual-Priv's Mechanism 1 (nn.TokenPruning, the code
	// the dualpriv method runs: dominant tokens by [CLS] attention,
	// contextual tokens fused from the rest) at a retention drawn
	// uniformly from [PruneMin, PruneMax] (one draw per sequence, every
	// image of it alike) and a contextual share PruneContextual, without
	// fusion noise; the other sequences keep every visual token. The
	// draws come from their own stream, so the batches are the same as
	// without it. Without it the base, trained on every token only,
	// answers nothing once Dual-Priv prunes (0% validation accuracy on
	// shapes-vqa-tune-lira at ε = 1 against DP-SGD's 20%, small,
	// 2026-11-25); LLaVA, which the paper prunes, tolerates it. The range
	// covers the retentions Dual-Priv is run at (fig3 sweeps 0.1–0.7, 0.4
	// by default). Fusion noise is left out: evaluation and attacks see
	// pruning without noise, and the noise's scale σ·C/B belongs to a
	// private run, not to the base. docs/engine.md ("Engineering notes")
	// records the choice and its measurements.
	PruneShare      float64 `json:"prune_share,omitempty"`
	PruneMin        float64 `json:"prune_min,omitempty"`
	PruneMax        float64 `json:"prune_max,omitempty"`
	PruneContextual float64 `json:"prune_contextual,omitempty"`
	// Mix is the number of examples of each source in every batch:
	// fashion-vqa (captions and class questions), shapes-vqa (captions,
	// counts, existence), fashion-cls (coarse labels), records (text) and
	// icl (generated episodes); in variants, shapes-qa (WithShapesQuestions)
	// and shapes-cells (WithCellCaptions).
	Mix map[string]int `json:"mix"`
	// TrainShots is the number of demonstrations of training episodes
	// (0: the icl task's shots, which held-out episodes use). More
	// demonstrations than classes repeat classes, and each repeated word is
	// an in-context target.
	TrainShots int `json:"train_shots,omitempty"`
	// LR is AdamW's peak learning rate; the schedule is a linear warm-up
	// over Warmup steps then a cosine decay to MinLR.
	LR     float64 `json:"lr"`
	MinLR  float64 `json:"min_lr"`
	Warmup int     `json:"warmup"`
	// WeightDecay is AdamW's decoupled weight decay (not applied to biases,
	// norms, embeddings and smear logits).
	WeightDecay float64 `json:"weight_decay"`
	// ClipNorm bounds the global L2 norm of the mean batch gradient.
	ClipNorm float64 `json:"clip_norm"`
	// Eval is the number of held-out examples (episodes) per metric.
	Eval int `json:"eval"`
	// FineTune is the quick non-private LoRA fine-tune on fashion-vqa
	// private train that shows the private task is new to the base.
	FineTune FineTune `json:"finetune"`
}

// FineTune configures the quality check's LoRA fine-tune.
type FineTune struct {
	Steps   int      `json:"steps"`
	Batch   int      `json:"batch"`
	LR      float64  `json:"lr"`
	Targets []string `json:"targets"`
}

// batchSize returns the number of examples per step.
func (p *Plan) batchSize() int {
	n := 0
	for _, k := range p.Mix {
		n += k
	}
	return n
}

// dualPrivContextual is Dual-Priv's default contextual share of the
// retained patch tokens (30 contextual of 221, the dualpriv method's
// contextual_share).
const dualPrivContextual = 30.0 / 221

// plans are the recipes of the presets; docs/engine.md ("Engineering
// notes") records how they were chosen.
var plans = map[datasets.Scale]Plan{
	datasets.Smoke: {
		LMLayers:    2,
		VisionSteps: 150, VisionBatch: 16, VisionLR: 3e-3,
		ICLSteps: 300, ICLBatch: 16, ICLLR: 3e-3,
		Steps:      400,
		PruneShare: 0.5, PruneMin: 0.1, PruneMax: 0.7, PruneContextual: dualPrivContextual,
		Mix:        map[string]int{srcICL: 8, srcFashion: 4, srcCoarse: 2, srcShapes: 2, srcRecords: 2},
		TrainShots: 6,
		LR:         3e-3, MinLR: 3e-4, Warmup: 20,
		WeightDecay: 0.01, ClipNorm: 1,
		Eval:     200,
		FineTune: FineTune{Steps: 60, Batch: 16, LR: 1e-2, Targets: []string{"q", "v", "fc1", "fc2"}},
	},
	datasets.Small: {
		VisionSteps: 300, VisionBatch: 32, VisionLR: 2e-3,
		ICLSteps: 600, ICLBatch: 16, ICLLR: 2e-3,
		Steps:      1000,
		PruneShare: 0.5, PruneMin: 0.1, PruneMax: 0.7, PruneContextual: dualPrivContextual,
		Mix: map[string]int{srcICL: 6, srcFashion: 4, srcCoarse: 2, srcShapes: 3, srcRecords: 2},
		LR:  2e-3, MinLR: 2e-4, Warmup: 50,
		WeightDecay: 0.01, ClipNorm: 1,
		Eval:     300,
		FineTune: FineTune{Steps: 100, Batch: 16, LR: 5e-3, Targets: []string{"q", "v", "fc1", "fc2"}},
	},
	datasets.Full: {
		VisionSteps: 3000, VisionBatch: 64, VisionLR: 1e-3,
		ICLSteps: 3000, ICLBatch: 32, ICLLR: 1e-3,
		Steps:      20000,
		PruneShare: 0.5, PruneMin: 0.1, PruneMax: 0.7, PruneContextual: dualPrivContextual,
		Mix: map[string]int{srcICL: 16, srcFashion: 8, srcCoarse: 4, srcShapes: 6, srcRecords: 6},
		LR:  5e-4, MinLR: 5e-5, Warmup: 500,
		WeightDecay: 0.01, ClipNorm: 1,
		Eval:     1000,
		FineTune: FineTune{Steps: 500, Batch: 32, LR: 2e-3, Targets: []string{"q", "v", "fc1", "fc2"}},
	},
}

// WithScenes returns p with VisionScenes set to half of VisionBatch: the
// recipe of the scenes variant of a preset (Options.Scenes).
func (p Plan) WithScenes() Plan {
	p.VisionScenes = p.VisionBatch / 2
	return p
}

// WithShapesQuestions returns p with public shapes-vqa questions of every
// kind in the mixture (Mix["shapes-qa"], twice the shapes-vqa share of a
// batch, over p's own sources): the recipe of the shapes-questions variant
// of a preset (Options.ShapesQuestions). The preset's mixture holds the
// public split of shapes-vqa only, whose questions are counts and
// existence; fine-tuned on the private task, the small base then answers
// five of its seven question kinds with their majority answers
// (docs/dualpriv.md). LLaVA's instruction mixture holds GQA's training
// questions, public and disjoint from the evaluation split.
func (p Plan) WithShapesQuestions() Plan {
	mix := make(map[string]int, len(p.Mix)+1)
	for k, n := range p.Mix {
		mix[k] = n
	}
	mix[srcShapesQA] = 2 * p.Mix[srcShapes]
	p.Mix = mix
	return p
}

// WithCaptions returns p with the captions-only stage (Plan.CaptionSteps)
// of the captions variant of a preset (Options.Captions): as many steps
// as the mixture (Plan.Steps), batches as large as the in-context
// stage's, at the mixture's peak learning rate, training the projector
// and the language model.
func (p Plan) WithCaptions() Plan {
	p.CaptionSteps, p.CaptionBatch, p.CaptionLR = p.Steps, p.ICLBatch, p.LR
	p.CaptionParts = trainedParts
	return p
}

// WithCellCaptions returns p with the captions-only stage of WithCaptions
// on cell-first scene captions (Plan.CaptionCells), steps times its steps
// (0 or 1: as many as the mixture), training the vision encoder too with
// vision, and the same cell-first captions kept in the mixture
// (Mix["shapes-cells"], as many a batch as the shapes-vqa source, every
// visual token kept: the token-dropping augmentation skips them): the
// recipe of the cell-captions variant of a preset (Options.CellCaptions).
// Without them in the mixture, the mixture that follows the stage undoes
// what the stage taught (docs/dualpriv.md).
func (p Plan) WithCellCaptions(steps int, vision bool) Plan {
	p = p.WithCaptions()
	p.CaptionSteps *= max(1, steps)
	p.CaptionCells = true
	if vision {
		p.CaptionParts = append([]string{"vision"}, trainedParts...)
	}
	mix := make(map[string]int, len(p.Mix)+1)
	for k, n := range p.Mix {
		mix[k] = n
	}
	mix[srcShapesCells] = p.Mix[srcShapes]
	p.Mix = mix
	return p
}

// Cell forms of Plan.CaptionForm, the parts of a "+"-joined form.
const (
	formShuffled  = "shuffled"
	formSingle    = "single"
	formQuestions = "questions"
	formFresh     = "fresh"
)

// CellForms are the cell forms a spec's base param cell_form selects by
// index (0: the fixed order).
var CellForms = []string{"", formShuffled, formSingle, formQuestions, formSingle + "+" + formQuestions, formShuffled + "+" + formQuestions,
	formSingle + "+" + formFresh, formSingle + "+" + formQuestions + "+" + formFresh, formShuffled + "+" + formFresh}

// cellFormParts are the parts a Plan.CaptionForm may join, in the order
// a form lists them.
var cellFormParts = []string{formShuffled, formSingle, formQuestions, formFresh}

// CellFormParts splits a cell form (Plan.CaptionForm) into its parts, and
// returns an error unless each is one of "shuffled", "single",
// "questions" and "fresh", once, in that order, and "fresh" is not alone.
// "" has no parts (the fixed order).
func CellFormParts(form string) ([]string, error) {
	if form == "" {
		return nil, nil
	}
	parts := strings.Split(form, "+")
	last := -1
	for _, p := range parts {
		i := slices.Index(cellFormParts, p)
		if i <= last {
			return nil, fmt.Errorf("pretrain: cell form %q: want \"+\"-joined parts among %s, each once, in that order", form, strings.Join(cellFormParts, ", "))
		}
		last = i
	}
	if len(parts) == 1 && parts[0] == formFresh {
		return nil, fmt.Errorf("pretrain: cell form %q: fresh scenes need a form to describe them", form)
	}
	return parts, nil
}

// WithCellForm returns p (a plan of WithCellCaptions) with its cell-first
// descriptions, in the stage and in the mixture, in form
// (Plan.CaptionForm; CellFormParts checks it).
func (p Plan) WithCellForm(form string) Plan {
	p.CaptionForm = form
	return p
}

// PlanFor returns the recipe of a scale.
func PlanFor(scale datasets.Scale) (Plan, error) {
	p, ok := plans[scale]
	if !ok {
		return Plan{}, fmt.Errorf("pretrain: unknown scale %q", scale)
	}
	return p, nil
}

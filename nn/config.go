// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"slices"
)

// Special token ids shared by the whole project.
const (
	TokenPad   = 0
	TokenUnk   = 1
	TokenBOS   = 2
	TokenEOS   = 3
	TokenImage = 4
)

// Config describes a model completely: together with the parameter values it
// is everything a checkpoint needs, and New… builds the same initial model
// from it bit for bit (initial values are drawn from Seed). It marshals to
// JSON. Fields a model does not use are ignored by it: TinyMLLM uses the
// vision, language-model and sequence fields; ViT the vision fields and
// Classes; Fusion the Conv, text (Width, Layers, Heads, Vocab, MaxLen),
// Classes, ImageEncoder and FusionMode fields.
type Config struct {
	// Vocab is the vocabulary size, including the special tokens 0–4.
	Vocab int `json:"vocab"`
	// ImageSize and Channels describe the input images: Channels×
	// ImageSize×ImageSize, channel-major, values in [0, 1]. Defaults 28
	// and 3.
	ImageSize int `json:"image_size"`
	Channels  int `json:"channels"`
	// Patch is the side of a square patch; it must divide ImageSize.
	Patch int `json:"patch"`
	// VisionWidth, VisionLayers and VisionHeads shape the ViT encoder.
	VisionWidth  int `json:"vision_width"`
	VisionLayers int `json:"vision_layers"`
	VisionHeads  int `json:"vision_heads"`
	// Width, Layers and Heads shape the language model (TinyMLLM) or the
	// text encoder (Fusion).
	Width  int `json:"width"`
	Layers int `json:"layers"`
	Heads  int `json:"heads"`
	// MLPRatio is the hidden width of every MLP over the model width;
	// default 4.
	MLPRatio int `json:"mlp_ratio"`
	// MaxLen is the longest token sequence, visual tokens included.
	MaxLen int `json:"max_len"`
	// Positions selects how TinyMLLM's language model sees token order:
	// "" or "learned" (absolute position embeddings added to its inputs) or
	// "rope" (rotary position embeddings, Su et al. 2021, on the queries
	// and keys of every language-model block, as in the LLaMA/Vicuna
	// models under LLaVA; no absolute embedding). With rotary embeddings
	// attention scores depend on relative positions only (on a text
	// key-word recall task they trained somewhat faster than learned
	// embeddings; docs/engine.md, "Engineering notes"). The vision encoder
	// and Fusion keep learned embeddings.
	Positions string `json:"positions,omitempty"`
	// SmearKeys mixes every key of TinyMLLM's language model with the key
	// before it, with a learned weight per head (Tape.SmearKeys; the
	// "smeared keys" of Olsson et al. 2022), initially half and half. It
	// lets one attention layer find "the token after one like mine", the
	// step in-context learning rests on (on a text key-word recall task it
	// removes a long plateau; docs/engine.md, "Engineering notes"). The
	// vision encoder and Fusion do not use it.
	SmearKeys bool `json:"smear_keys,omitempty"`
	// CLSLast moves the first visual token of every image (the [CLS]
	// token, unless a visual transform put another row first) after the
	// image's other visual tokens in TinyMLLM's language-model input, so
	// the text that follows an image follows its summary. With SmearKeys,
	// the key of a word right after an image then describes that image,
	// and one attention layer can match a query image against the words
	// of earlier images: in-context learning (package pretrain). Visual
	// transforms and Visual.Tokens keep the encoder's order; only the
	// language model sees the rotation.
	CLSLast bool `json:"cls_last,omitempty"`
	// CLSAttnLayer selects the vision block whose [CLS]→patch attention is
	// exposed, counted from the end: 1 is the last block, 2 the
	// penultimate. Default 2 (Dual-Priv takes the [CLS] attention of the
	// penultimate layer), clamped to the first block.
	CLSAttnLayer int `json:"cls_attn_layer"`
	// Classes is the number of labels of the classifiers.
	Classes int `json:"classes"`
	// ConvChannels are the output channels of the convolutions of the
	// Fusion image encoder (3×3, padding 1, each followed by ReLU and 2×2
	// max pooling). Default [16, 32].
	ConvChannels []int `json:"conv_channels,omitempty"`
	// ConvGroups, when positive, puts a group normalisation with that many
	// groups (Tape.GroupNorm) between each convolution of the CNN
	// classifier and its ReLU; it must divide every width of CNNWidths.
	// Zero (the default) means no norm inside the CNN's blocks.
	ConvGroups int `json:"conv_groups,omitempty"`
	// ImageEncoder is the Fusion image encoder: "cnn" (or "": the
	// convolutions of ConvChannels, then a Linear to Width) or "mlp" (a
	// Linear from the flattened image to Width, ReLU, and a Linear to
	// Width; its first layer sees the pixels, so a batch-1 gradient
	// reveals the image exactly). ConvChannels is ignored under "mlp".
	ImageEncoder string `json:"image_encoder,omitempty"`
	// FusionMode is "late" (default: concatenate the pooled image and text
	// features before the head) or "early" (the image feature enters the
	// text encoder as its first token).
	FusionMode string `json:"fusion_mode,omitempty"`
	// Dropout is the dropout rate after attention and MLP outputs. Default
	// 0 (off, as DP training wants).
	Dropout float64 `json:"dropout"`
	// Seed seeds the initial values.
	Seed uint64 `json:"seed"`
	// PEFT is the fine-tuning configuration; the zero value means none
	// (every tensor frozen until a method calls SetPEFT).
	PEFT PEFT `json:"peft"`
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.ImageSize == 0 {
		c.ImageSize = 28
	}
	if c.Channels == 0 {
		c.Channels = 3
	}
	if c.MLPRatio == 0 {
		c.MLPRatio = 4
	}
	if c.CLSAttnLayer == 0 {
		c.CLSAttnLayer = 2
	}
	if len(c.ConvChannels) == 0 {
		c.ConvChannels = []int{16, 32}
	}
	if c.FusionMode == "" {
		c.FusionMode = "late"
	}
	return c
}

func (c Config) checkVision() error {
	switch {
	case c.Patch <= 0 || c.ImageSize%c.Patch != 0:
		return fmt.Errorf("nn: patch %d does not divide image size %d", c.Patch, c.ImageSize)
	case c.VisionWidth <= 0 || c.VisionLayers <= 0 || c.VisionHeads <= 0:
		return fmt.Errorf("nn: vision width, layers and heads must be positive, got %d, %d, %d", c.VisionWidth, c.VisionLayers, c.VisionHeads)
	case c.VisionWidth%c.VisionHeads != 0:
		return fmt.Errorf("nn: vision width %d not divisible by %d heads", c.VisionWidth, c.VisionHeads)
	case c.Channels <= 0:
		return fmt.Errorf("nn: channels must be positive, got %d", c.Channels)
	case c.CLSAttnLayer < 0:
		return fmt.Errorf("nn: [CLS] attention layer %d counted from the end must be positive", c.CLSAttnLayer)
	}
	return nil
}

func (c Config) checkText() error {
	switch {
	case c.Vocab <= TokenImage:
		return fmt.Errorf("nn: vocabulary size %d too small (the special tokens need 5)", c.Vocab)
	case c.Width <= 0 || c.Layers <= 0 || c.Heads <= 0:
		return fmt.Errorf("nn: width, layers and heads must be positive, got %d, %d, %d", c.Width, c.Layers, c.Heads)
	case c.Width%c.Heads != 0:
		return fmt.Errorf("nn: width %d not divisible by %d heads", c.Width, c.Heads)
	case c.MaxLen <= 0:
		return fmt.Errorf("nn: max length must be positive, got %d", c.MaxLen)
	case c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("nn: dropout %v not in [0, 1)", c.Dropout)
	case c.Positions != "" && c.Positions != "learned" && c.Positions != "rope":
		return fmt.Errorf("nn: unknown positions %q (want learned or rope)", c.Positions)
	case c.Positions == "rope" && (c.Width/c.Heads)%2 != 0:
		return fmt.Errorf("nn: rotary positions need an even head width, got %d", c.Width/c.Heads)
	}
	return nil
}

// Patches returns the number of patches of an image.
func (c Config) Patches() int {
	c = c.withDefaults()
	if c.Patch <= 0 {
		return 0
	}
	n := c.ImageSize / c.Patch
	return n * n
}

// Preset returns the configuration of a named scale with the given
// vocabulary size:
//
//   - "smoke": CI; a fine-tuning run takes seconds. Width 32, one vision
//     and one LM block, 2 heads, patch 14 (4 patches), max length 64, LoRA
//     rank 4.
//   - "small": the default; pretrains in minutes on two cores and holds an
//     8-demonstration in-context episode with one image per demonstration
//     (9 images × 17 visual tokens + text). Vision width 64, 2 blocks,
//     4 heads, patch 7 (16 patches); LM width 96, 3 blocks, 4 heads; max
//     length 320; LoRA rank 8.
//   - "full": closest to the papers' shapes, for bigger machines. Width
//     256, 6 blocks each, 8 heads, patch 4 (49 patches), max length 640,
//     LoRA rank 16.
//
// Every preset's TinyMLLM smears its language model's keys and puts each
// image's [CLS] token after its patches (SmearKeys, CLSLast). It returns an
// error for an unknown name.
func Preset(name string, vocab int) (Config, error) {
	var c Config
	switch name {
	case "smoke":
		c = Config{Patch: 14, VisionWidth: 32, VisionLayers: 1, VisionHeads: 2,
			Width: 32, Layers: 1, Heads: 2, MaxLen: 64, ConvChannels: []int{4, 8},
			PEFT: PEFT{Rank: 4, Alpha: 8, AdapterDim: 8}}
	case "small":
		c = Config{Patch: 7, VisionWidth: 64, VisionLayers: 2, VisionHeads: 4,
			Width: 96, Layers: 3, Heads: 4, MaxLen: 320, ConvChannels: []int{16, 32},
			PEFT: PEFT{Rank: 8, Alpha: 16, AdapterDim: 16}}
	case "full":
		c = Config{Patch: 4, VisionWidth: 256, VisionLayers: 6, VisionHeads: 8,
			Width: 256, Layers: 6, Heads: 8, MaxLen: 640, ConvChannels: []int{32, 64},
			PEFT: PEFT{Rank: 16, Alpha: 32, AdapterDim: 64}}
	default:
		return Config{}, fmt.Errorf("nn: unknown preset %q (want smoke, small or full)", name)
	}
	c.Vocab = vocab
	c.ImageSize, c.Channels, c.MLPRatio, c.CLSAttnLayer = 28, 3, 4, 2
	c.FusionMode = "late"
	// TinyMLLM's language model: smeared keys and [CLS] after the patches,
	// the two pieces that let it learn in context within the pretraining
	// budgets (package pretrain).
	c.SmearKeys, c.CLSLast = true, true
	c.Seed = 1
	return c, nil
}

// presetImages is the number of images the presets' longest sequence
// holds: an 8-demonstration in-context episode and its query.
const presetImages = 9

// WithPatch returns c with patch side patch, for a preset with more (or
// fewer) patches an image than its own: the vision encoder sees
// (ImageSize/patch)² patches, and MaxLen grows by presetImages times the
// extra visual tokens an image brings (rounded up to a multiple of 64), so
// that the sequences c holds still fit. Every other field is c's. patch 0,
// or c's own patch, returns c unchanged. It returns an error when patch
// does not divide the image size. For example the small preset with patch
// 4 sees 7×7 = 49 patches an image (instead of 4×4 = 16) and holds 640
// tokens (instead of 320).
func (c Config) WithPatch(patch int) (Config, error) {
	if patch == 0 || patch == c.Patch {
		return c, nil
	}
	size := c.withDefaults().ImageSize
	if patch < 0 || size%patch != 0 {
		return Config{}, fmt.Errorf("nn: patch %d does not divide image size %d", patch, size)
	}
	old := c.Patches()
	c.Patch = patch
	if extra := c.Patches() - old; extra > 0 {
		c.MaxLen = (c.MaxLen + presetImages*extra + 63) / 64 * 64
	}
	return c, nil
}

// PresetNames lists the presets Preset knows.
var PresetNames = []string{"smoke", "small", "full"}

// PEFT selects a parameter-efficient fine-tuning method. The zero value is
// no fine-tuning (everything frozen).
type PEFT struct {
	// Method is "" or "none" (nothing trainable), "lora", "adapter",
	// "bitfit" (biases only), "full" (every tensor of the parts), or
	// "head" (classifier head only; SPARTA's "last").
	Method string `json:"method"`
	// Rank and Alpha are LoRA's r and α (scale α/r). Defaults 8 and 2·r.
	Rank  int     `json:"rank"`
	Alpha float64 `json:"alpha"`
	// Targets are the linear maps of each transformer block that get LoRA:
	// any of q, k, v, o, fc1, fc2. Default q and v.
	Targets []string `json:"targets,omitempty"`
	// BInitStd is the standard deviation of LoRA B's initial values;
	// 0 (default) initialises B to zero so the adapted model equals the
	// base model.
	BInitStd float64 `json:"b_init_std"`
	// AdapterDim is the bottleneck width of Houlsby adapters; default 16.
	AdapterDim int `json:"adapter_dim"`
	// Parts are the model parts that are fine-tuned. Defaults: TinyMLLM
	// ["lm"] for lora and adapter, ["projector", "lm"] for bitfit and full;
	// ViT ["vision"]; Fusion ["image", "text"]. Classifier heads are always
	// trainable unless Method is none.
	Parts []string `json:"parts,omitempty"`
	// Seed seeds the initial values of LoRA and adapter tensors; 0 means
	// the model's Config.Seed. Either way the base tensors do not change.
	Seed uint64 `json:"seed,omitempty"`
}

func (p PEFT) withDefaults() PEFT {
	if p.Rank == 0 {
		p.Rank = 8
	}
	if p.Alpha == 0 {
		p.Alpha = 2 * float64(p.Rank)
	}
	if len(p.Targets) == 0 {
		p.Targets = []string{"q", "v"}
	}
	if p.AdapterDim == 0 {
		p.AdapterDim = 16
	}
	return p
}

func (p PEFT) check(parts []string) error {
	switch p.Method {
	case "", "none", "lora", "adapter", "bitfit", "full", "head":
	default:
		return fmt.Errorf("nn: unknown PEFT method %q", p.Method)
	}
	if p.Rank < 0 || p.AdapterDim < 0 || p.BInitStd < 0 {
		return fmt.Errorf("nn: negative PEFT size")
	}
	for _, t := range p.Targets {
		switch t {
		case "q", "k", "v", "o", "fc1", "fc2":
		default:
			return fmt.Errorf("nn: unknown LoRA target %q (want q, k, v, o, fc1 or fc2)", t)
		}
	}
	for _, s := range p.Parts {
		if !slices.Contains(parts, s) {
			return fmt.Errorf("nn: unknown model part %q (want one of %v)", s, parts)
		}
	}
	return nil
}

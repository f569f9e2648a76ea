// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

func init() { Register(DualPriv{}) }

// DualPriv is Dual-Priv Pruning: DP-SGD on LoRA (exactly DPSGD's sampler,
// privatizer, accountant and optimizer) with two mechanisms added.
//
// Mechanism 1, visual token pruning and fusion (nn.TokenPruning, a
// VisualTransform before the projector; pre-processing of each example, no
// privacy cost): the patch
// tokens of each image are ranked by the [CLS] attention of the configured
// vision block (Config.CLSAttnLayer, the penultimate by default), averaged
// over heads; [CLS] and the top-ranked dominant patches are kept; the other
// patches are grouped around k centres at a uniform stride over them (the
// centres excluded from the groups), each patch joining the centre of
// highest cosine similarity of hidden states, and each group becomes one
// contextual token, centre + mean of its members (a centre alone if none
// join). In training forward passes only, Gaussian fusion noise of standard
// deviation σ·C/B per coordinate (the per-coordinate standard deviation of
// the DP-SGD noise on the mean gradient) is added to the contextual tokens;
// evaluation and attacks see the same pruning without noise.
//
// Mechanism 2, gradient-update pruning (post-processing of the noisy
// gradient, no privacy cost): the privatised gradient is split into blocks,
// one per trainable tensor (LoRA A and B separately), and only the
// ⌈P_K·J⌉ blocks of largest noisy-gradient ℓ₂ norm are updated; the others
// get neither a parameter nor an optimizer-moment update that step.
//
// Both mechanisms are post-processing or pre-processing of the DP-SGD
// mechanism, so the privacy record equals DPSGD's for the same (ε, δ, q,
// steps). The controls a reviewer asks for are hyperparameters: blocks
// ranked at random, by norm over √size or by the estimated clean squared
// norm ‖g_b‖² − d_b·(σC/B)² (block_rank), token pruning without fusion
// noise or fusion noise without pruning (tokens), the fusion noise's scale
// (fusion_noise_scale), the vision block whose [CLS] attention ranks the
// patches (cls_attn_layer), dominant patches chosen at random (dominant),
// evaluation on every token (eval_tokens), and each mechanism alone
// (tokens: none; update_ratio: 1). Every default is the paper's.
//
// References:
//   - Dual-Priv Pruning: Efficient Differential Private Fine-Tuning in
//     Multimodal Large Language Models (anonymous ICLR submission, under
//     review), §4.1 (Eqs. 5–8), §4.2 (Eqs. 9–11), Appendix L, Algorithm 1.
//   - S. Yang et al., VisionZip: Longer is better but not necessary in
//     vision language models, 2024, arXiv:2412.04467 (the token pruning
//     Mechanism 1 follows: uniform-stride centres, centres excluded).
type DualPriv struct{}

// Name implements Method.
func (DualPriv) Name() string { return "dualpriv" }

// Arch implements Method.
func (DualPriv) Arch() string { return "tinymllm" }

// The token modes of Mechanism 1 (the tokens hyperparameter).
const (
	tokensPruneFuse = "prune-fuse" // prune and fuse, fusion noise in training (the paper)
	tokensPrune     = "prune"      // prune and fuse, no fusion noise (control)
	tokensNoise     = "noise"      // keep every token, fusion noise on the non-dominant ones (control)
	tokensNone      = "none"       // no Mechanism 1 (ablation)
)

// The block rankings of Mechanism 2 (the block_rank hyperparameter).
const (
	rankNorm     = "norm"            // ℓ₂ norm of the noisy block gradient (the paper)
	rankSizeNorm = "size-normalised" // norm / √(block size) (control)
	rankRandom   = "random"          // uniformly random blocks (control)
	// rankSignal ranks by an unbiased estimate of the block's clean
	// squared norm, ‖g_b‖² − d_b·s² with s the noise's per-coordinate
	// standard deviation (σ·C/B, public): at small ε the raw norm of a
	// d-element block is dominated by the noise's √d·s, so the raw ranking
	// favours large blocks (control).
	rankSignal = "signal"
)

// What evaluation and the attacks see (the eval_tokens hyperparameter),
// and how the dominant tokens are chosen (dominant).
const (
	evalPruned = "pruned" // the same pruning as training, without noise (the paper)
	evalAll    = "all"    // every token (control: is pruning out of the base's distribution?)

	dominantAttention = "attention" // [CLS] attention of the chosen vision block (the paper)
	dominantRandom    = "random"    // a random choice per image (control)
)

// Params implements Method: DPSGD's recipe (dpsgdParams, tuned for DP-SGD
// and shared so that the two differ by the mechanisms alone) and the two
// mechanisms' knobs. The paper keeps 222 of 577 visual tokens (191 dominant, 30
// contextual, [CLS]; 38.5%, which it calls "40% of total"): retention 0.4 of
// the patches (221/576 = 0.384 would give the paper's counts exactly at
// 576 patches) and a contextual share 30/221 ≈ 0.14 of the retained
// patches; P_K = 80%. At the presets' 4, 16 and 49 patches an image,
// retention 0.4 keeps 2, 6 and 20 patch tokens.
func (DualPriv) Params() []Param {
	return append(dpsgdParams(),
		Param{Name: "retention", Kind: Float, Doc: "fraction of an image's patch tokens that reach the language model (dominant + contextual), in (0, 1]",
			Default: same(0.4), Check: halfOpenFraction},
		Param{Name: "contextual_share", Kind: Float, Doc: "share of the retained patch tokens that are contextual (fused) tokens, in [0, 1)",
			Default: same(30.0 / 221), Check: func(v any) error {
				if f := v.(float64); !(f >= 0 && f < 1) {
					return fmt.Errorf("want a share in [0, 1)")
				}
				return nil
			}},
		Param{Name: "update_ratio", Kind: Float, Doc: "fraction P_K of gradient blocks updated each step, in (0, 1]",
			Default: same(0.8), Check: halfOpenFraction},
		Param{Name: "tokens", Kind: String, Doc: "Mechanism 1: prune-fuse (the paper), prune (no fusion noise), noise (fusion noise, no pruning) or none",
			Default: same(tokensPruneFuse), Check: oneOf(list(tokensPruneFuse, tokensPrune, tokensNoise, tokensNone))},
		Param{Name: "block_rank", Kind: String, Doc: "Mechanism 2's ranking of blocks: norm (the paper), size-normalised (norm/√size), signal (‖g‖² − size·(σC/B)², the noise's expected share removed) or random",
			Default: same(rankNorm), Check: oneOf(list(rankNorm, rankSizeNorm, rankSignal, rankRandom))},
		Param{Name: "fusion_noise_scale", Kind: Float, Doc: "multiplier of the fusion noise's standard deviation σ·C/B (1 the paper; 0 none)",
			Default: same(1.0), Check: func(v any) error {
				if f := v.(float64); !(f >= 0) || math.IsInf(f, 0) {
					return fmt.Errorf("want a finite scale ≥ 0")
				}
				return nil
			}},
		Param{Name: "cls_attn_layer", Kind: Int, Doc: "vision block whose [CLS] attention ranks the patches, counted from the end (1 the last, 2 the penultimate as in the paper; clamped to the first block)",
			Default: same(2), Check: func(v any) error {
				if v.(int) < 1 {
					return fmt.Errorf("want a block ≥ 1 counted from the end")
				}
				return nil
			}},
		Param{Name: "dominant", Kind: String, Doc: "how Mechanism 1 chooses the dominant patches: attention ([CLS] attention, the paper) or random (a fixed random choice per image, control)",
			Default: same(dominantAttention), Check: oneOf(list(dominantAttention, dominantRandom))},
		Param{Name: "eval_tokens", Kind: String, Doc: "what evaluation and the attacks see: pruned (training's pruning without noise, the paper) or all (every token; the visual_tokens result still counts training's tokens)",
			Default: same(evalPruned), Check: oneOf(list(evalPruned, evalAll))},
	)
}

var _ Effector = DualPriv{}

// Effective implements Effector: the retention as the patch tokens that
// Mechanism 1 keeps of an image at scale (nn.TokenPruning.Split of the
// preset's patches), when tokens are pruned, and the update ratio as the
// ⌈P_K·J⌉ of the J gradient blocks (the trainable tensors of the
// preset's model with the run's PEFT) that Mechanism 2 updates, when it
// prunes blocks; with pruned tokens also the vision block whose [CLS]
// attention ranks them (cls_attn_layer clamps to the first block).
func (DualPriv) Effective(task, scale string, h Hyper) map[string]string {
	cfg, err := nn.Preset(scale, datasets.Vocab().Len())
	if err != nil {
		return nil
	}
	out := map[string]string{}
	if mode := h.String("tokens"); mode == tokensPruneFuse || mode == tokensPrune {
		n := cfg.Patches()
		tp := tokenPruner{Mode: mode, Retention: h.Float("retention"), Contextual: h.Float("contextual_share")}
		d, c := tp.pruning().Split(n)
		out["retention"] = fmt.Sprintf("%d dominant + %d contextual tokens of %d patches", d, c, n)
		layers := cfg.VisionLayers
		out["cls_attn_layer"] = fmt.Sprintf("vision block %d of %d", max(layers-h.Int("cls_attn_layer"), 0)+1, layers)
	}
	if ratio := h.Float("update_ratio"); ratio < 1 {
		if j := gradientBlocks(cfg, h); j > 0 {
			out["update_ratio"] = fmt.Sprintf("%d of %d gradient blocks", len(slices.DeleteFunc(topBlocks(make([]float64, j), ratio), func(b bool) bool { return !b })), j)
		}
	}
	return out
}

// blockCounts caches gradientBlocks by model configuration and PEFT.
var blockCounts sync.Map // string → int

// gradientBlocks returns the number of trainable tensors (Mechanism 2's
// blocks) of a TinyMLLM of configuration cfg with the PEFT of h, as
// newLoRALoop lays them out; 0 if the model cannot be built.
func gradientBlocks(cfg nn.Config, h Hyper) int {
	p := h.peft(0)
	emb := false
	if _, ok := h.values["train_embeddings"]; ok {
		emb = h.Bool("train_embeddings")
	}
	key := fmt.Sprintf("%+v %+v %v", cfg, p, emb)
	if j, ok := blockCounts.Load(key); ok {
		return j.(int)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		return 0
	}
	layout, err := m.SetPEFT(p)
	if err != nil {
		return 0
	}
	if emb {
		m.Tok.Trainable = true
		layout = nn.NewLayout(m.Params())
	}
	j := len(layout.Params)
	blockCounts.Store(key, j)
	return j
}

func halfOpenFraction(v any) error {
	if f := v.(float64); !(f > 0 && f <= 1) {
		return fmt.Errorf("want a fraction in (0, 1]")
	}
	return nil
}

// StreamFusion and StreamBlocks are DualPriv's random streams: the fusion
// noise (one stream per step, example and image) and the random block
// choice of the random control.
const (
	StreamFusion = "methods/dualpriv-fusion-noise"
	StreamBlocks = "methods/dualpriv-random-blocks"
)

// FineTune implements Method.
func (DualPriv) FineTune(ctx context.Context, job *Job) (*Result, error) {
	const name = "dualpriv"
	h := job.Hyper
	l, acc, err := newDPSGDLoop(ctx, name, job)
	if err != nil {
		return nil, err
	}
	tp := tokenPruner{
		Mode:       h.String("tokens"),
		Retention:  h.Float("retention"),
		Contextual: h.Float("contextual_share"),
		Random:     h.String("dominant") == dominantRandom,
	}
	m := job.Model.(*nn.TinyMLLM)
	if _, err := m.SetCLSAttnLayer(h.Int("cls_attn_layer")); err != nil {
		return nil, err
	}
	// σ·C/B: the per-coordinate standard deviation of the privatised mean
	// gradient's noise.
	noiseStd := h.noise(acc.Sigma) * h.Clip / l.expectedBatch()
	if tp.Mode != tokensNone {
		if tp.Mode != tokensPrune {
			tp.NoiseStd = h.Float("fusion_noise_scale") * noiseStd
		}
		l.visual = func(step, example int) nn.VisualTransform {
			return tp.transform(job.Seed, step, example)
		}
	}
	if ratio := h.Float("update_ratio"); ratio < 1 {
		bp := blockPruner{Ratio: ratio, Rank: h.String("block_rank"), layout: l.layout, NoiseStd: noiseStd,
			rng: rand.New(rand.NewPCG(job.Seed, privacy.StreamID(StreamBlocks)))}
		l.mask = bp.mask
	}
	res, err := l.run(ctx, acc)
	if err != nil {
		return nil, err
	}
	if (tp.Mode == tokensPruneFuse || tp.Mode == tokensPrune) && h.String("eval_tokens") == evalPruned {
		inf := tp
		inf.NoiseStd = 0
		res.Visual = inf.transform(0, 0, 0)
	}
	res.VisualTokens = float64(tp.count(m.Config.Patches()))
	res.Release = dualPrivRelease(job, acc, tp, res.Steps)
	return res, nil
}

// A tokenPruner is Mechanism 1 for one run: the token mode and the
// pruning of nn.TokenPruning (the implementation pretraining's
// token-dropping augmentation shares).
type tokenPruner struct {
	Mode                  string
	Retention, Contextual float64
	// NoiseStd is the fusion noise's standard deviation per coordinate; 0
	// adds none.
	NoiseStd float64
	// Random chooses the dominant patches at random (the dominant control).
	Random bool
}

// pruning returns the nn.TokenPruning of p's mode (not called for
// tokensNone).
func (p tokenPruner) pruning() nn.TokenPruning {
	return nn.TokenPruning{Retention: p.Retention, Contextual: p.Contextual, KeepRest: p.Mode == tokensNoise, NoiseStd: p.NoiseStd, RandomDominant: p.Random}
}

// split returns how many of n patches stay dominant and how many
// contextual tokens the others become.
func (p tokenPruner) split(n int) (dominant, contextual int) {
	if p.Mode == tokensNone {
		return n, 0
	}
	return p.pruning().Split(n)
}

// count returns the number of visual tokens per image that reach the
// language model, [CLS] included.
func (p tokenPruner) count(n int) int {
	if p.Mode == tokensNone {
		return n + 1
	}
	return p.pruning().Count(n)
}

// transform returns the VisualTransform of example at step: the fusion
// noise of image i is drawn from its own stream of (seed, step, example,
// i), so the bits do not depend on which goroutine runs the example.
func (p tokenPruner) transform(seed uint64, step, example int) nn.VisualTransform {
	return func(index int, tokens, clsAttn nn.Tensor) nn.TokenMix {
		var noise *rand.Rand
		if p.NoiseStd > 0 {
			stream := privacy.StreamID(StreamFusion) ^ uint64(step)<<40 ^ uint64(example)<<8 ^ uint64(index)
			noise = rand.New(rand.NewPCG(seed, stream))
		}
		return p.mix(tokens, clsAttn, noise)
	}
}

// mix returns the token map of one image (nn.TokenPruning.Mix): tokens are
// the encoder's n+1 hidden states (row 0 [CLS]), clsAttn the [CLS]
// attention rows of every head, [heads, n+1]. noise, when not nil, draws
// the fusion noise.
func (p tokenPruner) mix(tokens, clsAttn nn.Tensor, noise *rand.Rand) nn.TokenMix {
	return p.pruning().Mix(tokens, clsAttn, noise)
}

// A blockPruner is Mechanism 2 for one run: the mask hook of the loop.
type blockPruner struct {
	Ratio float64
	Rank  string
	// NoiseStd is the per-coordinate standard deviation of the noise in
	// the privatised gradient (σ·C/B), for the signal ranking.
	NoiseStd float64
	layout   *nn.Layout
	rng      *rand.Rand
}

// mask returns the optimizer mask that keeps the ⌈Ratio·J⌉ blocks of g
// (the privatised gradient) that rank highest; the others keep their
// values and optimizer moments this step (Reset false).
func (p *blockPruner) mask(step int, g []float32) *optim.Mask {
	j := len(p.layout.Params)
	scores := make([]float64, j)
	for i := range j {
		b := p.layout.Block(g, i)
		switch p.Rank {
		case rankRandom:
			scores[i] = p.rng.Float64()
		case rankSizeNorm:
			scores[i] = norm(b) / math.Sqrt(float64(len(b)))
		case rankSignal:
			n := norm(b)
			scores[i] = float64(n*n) - float64(float64(len(b))*p.NoiseStd*p.NoiseStd)
		default:
			scores[i] = norm(b)
		}
	}
	return &optim.Mask{Params: topBlocks(scores, p.Ratio)}
}

// topBlocks returns which of the blocks to keep: the ⌈ratio·J⌉ of highest
// score (Algorithm 1, lines 12–15), ties broken by index.
func topBlocks(scores []float64, ratio float64) []bool {
	// The tolerance keeps 0.7·10 = 7.000000000000001 at 7; a ratio > 0
	// keeps at least one block, as ⌈P_K·J⌉ does.
	k := max(1, int(math.Ceil(float64(ratio*float64(len(scores)))-1e-9)))
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	keep := make([]bool, len(scores))
	for _, i := range order[:min(k, len(order))] {
		keep[i] = true
	}
	return keep
}

func norm(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(float64(v) * float64(v))
	}
	return math.Sqrt(s)
}

// dualPrivRelease returns the release of a Dual-Priv step after the run's
// last step: DP-SGD's, restricted to the update ratio's blocks
// by raw norm, the training forward pass with Mechanism 1 and its fusion
// noise. The controls' rankings (size-normalised, random) are not
// modelled: nil.
func dualPrivRelease(job *Job, acc accounting, tp tokenPruner, steps int) *Release {
	h := job.Hyper
	if h.String("block_rank") != rankNorm {
		return nil
	}
	r := dpsgdRelease(h, acc)
	r.Keep = h.Float("update_ratio")
	if tp.Mode != tokensNone {
		r.Train = func(example int) nn.VisualTransform { return tp.transform(job.Seed, steps, example) }
	}
	return r
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// PIIType is the kind of a personal-data span in a record.
type PIIType string

// The PII types of records.
const (
	PIIName PIIType = "name" // a person's full name
	PIIID   PIIType = "id"   // an application number
	PIIDate PIIType = "date" // a birth or event date
)

// Span marks tokens [Start, End) of an example's sequence Prompt ++ Answer as
// personal data of type Type. Text is the decoded span.
type Span struct {
	Start, End int
	Type       PIIType
	Text       string
}

// Example is one example of any task. Its slices are shared with the Dataset
// and with other examples (an icl image may appear in several public
// episodes): callers must not modify them.
type Example struct {
	// ID is stable for given task, scale, seed and source, and unique within
	// the dataset: "task/split/index", with "/canary-c/r" for the r-th copy of
	// canary c.
	ID string
	// Items names the underlying source items (Fashion-MNIST images as
	// "fmnist:ORIGIN", generated scenes and records by content); the private,
	// holdout and test splits share none.
	Items []string
	// Images holds the example's images in <image> placeholder order, each
	// ImageLen float32 values in [0, 1], RGB CHW.
	Images [][]float32
	// Prompt is the input token sequence, starting with BOS. For fl-mm it is
	// the caption only, without an <image> placeholder (Images[0] is the
	// image); fashion-cls has no prompt.
	Prompt []int
	// Answer is the target sequence ending with EOS for generative tasks
	// (loss on these tokens only), nil for classification tasks.
	Answer []int
	// Label is the class (an index into Dataset.Classes, or PublicClasses
	// in the public split) for fashion-cls and fl-mm, and the query's class
	// in private, holdout and test icl episodes; -1 otherwise.
	Label int
	// Kind is the question or record type (for example "class", "shade",
	// "count", "echr", "e2e", "canary").
	Kind string
	// TextOnly reports that the answer follows from the prompt's text alone
	// (fashion-vqa); accuracy on examples with TextOnly false is the
	// image-context (IMG) accuracy.
	TextOnly bool
	// PII lists the personal-data spans (records).
	PII []Span
	// Canary is the index in Dataset.Canaries of the canary this example is a
	// copy of, or -1.
	Canary int
	// Client is the federated client of a private fl-mm example, or -1.
	Client int
}

// Canary is a random secret inserted Reps times into private train, or, when
// Reps is 0, a reference canary drawn the same way and not inserted (for
// audits and exposure baselines).
type Canary struct {
	ID   string
	Reps int
	// Example is the canary as inserted (each copy has its own ID).
	Example Example
	// Secret is the secret's tokens (six digit words) for generative tasks,
	// nil for classification canaries, whose secret is Example.Label.
	Secret []int
}

// SplitNames are the splits of every task, in order: public (pretraining),
// private (fine-tuning train, the members), holdout (non-members from the
// same distribution) and test.
var SplitNames = []string{"public", "private", "holdout", "test"}

// Dataset is the data of one task at one scale, seed and source. Callers must
// not modify it: Fingerprint is computed once, by Build.
type Dataset struct {
	Task   string
	Scale  Scale
	Seed   uint64
	Source string // "embedded", "generated" or the Fashion-MNIST directory
	// PoolImages is the number of Fashion-MNIST images the source holds (0
	// for generated tasks): 8000 embedded, 70000 for the full release.
	PoolImages int
	// Generative reports that examples have answers; otherwise labels.
	Generative bool
	// Classes names the labels of private, holdout and test (fashion-cls,
	// fl-mm, and icl's fixed task).
	Classes []string
	// PublicClasses names the labels of the public split (fashion-cls: the
	// coarse categories).
	PublicClasses []string
	// Shots is the number of demonstrations per icl episode.
	Shots int
	// Mapping is the fixed label word of each class of the private icl task.
	Mapping []string
	// Clients and Alpha describe the fl-mm partition of Private.
	Clients int
	Alpha   float64

	Public, Private, Holdout, Test []Example
	Canaries                       []Canary
	// Selection, for icl, are public examples posed as the private task:
	// zero-shot queries (ZeroShot's form) of public images of the task's
	// classes that pretraining held out (PretrainHeldOut), each with the
	// task's word for its class, balanced over the classes. Methods may
	// choose settings on them at no privacy cost (DP-MTV's public head
	// selection). They are not hashed into the fingerprint, which keys
	// the cached base models: they are a function of the same inputs.
	Selection []Example
	// Pool, for the -lira tasks, says which examples of the fixed LiRA
	// pool are members: Private holds the pool examples i with Pool[i]
	// and Holdout the others, both in pool order. It is nil otherwise.
	Pool []bool

	fingerprint string
}

// Split returns the examples of the split named name, or nil.
func (d *Dataset) Split(name string) []Example {
	switch name {
	case "public":
		return d.Public
	case "private":
		return d.Private
	case "holdout":
		return d.Holdout
	case "test":
		return d.Test
	}
	return nil
}

// Fingerprint returns the hex SHA-256 of a canonical encoding of the dataset:
// its metadata and every field of every example of every split, in order, and
// of every canary. Same inputs give the same fingerprint on any machine.
func (d *Dataset) Fingerprint() string { return d.fingerprint }

// Options configure Build. A nil *Options means the defaults.
type Options struct {
	// Scale is the preset; "" means Small.
	Scale Scale
	// Seed selects the split assignment, generated content and canaries.
	Seed uint64
	// DataDir is a directory with the full Fashion-MNIST release. If empty,
	// the embedded subset is used, except at Full scale, which uses
	// DefaultFashionDir and fails when it is absent (the subset is too small).
	DataDir string
	// Clients overrides the fl-mm client count (default 4, 10, 20 by scale).
	Clients int
	// Alpha is the fl-mm Dirichlet concentration; 0 means 0.5.
	Alpha float64
	// Shots overrides the icl demonstrations per episode (default 4, 8, 8).
	Shots int
	// Ways overrides the classes per icl episode (default 3, 5, 5); it must
	// be between 2 and 10 and at most Shots.
	Ways int
	// ShapesBalanced draws shapes-vqa's private-side questions (and
	// shapes-vqa-tune's) with answers balanced within each kind (uniform
	// over the kind's answers that scenes give often enough); the public
	// split is unchanged. Other tasks ignore it.
	ShapesBalanced bool
}

// builder builds one task into d, whose metadata fields are set.
type builder func(d *Dataset, b *buildCtx) error

type buildCtx struct {
	opt    Options
	sizes  Sizes
	vocab  *Vocabulary
	images map[int][]float32 // converted Fashion-MNIST images by pool index
}

// image returns pool image idx of f as RGB CHW, converting it once per build
// so examples that show the same image share one slice.
func (b *buildCtx) image(f *Fashion, idx int) []float32 {
	if img, ok := b.images[idx]; ok {
		return img
	}
	if b.images == nil {
		b.images = make(map[int][]float32)
	}
	img := f.Image(idx)
	b.images[idx] = img
	return img
}

// rng returns the task's random stream for purpose.
func (b *buildCtx) rng(task, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(task))
	h.Write([]byte{0})
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(b.opt.Seed, h.Sum64()))
}

var tasks = map[string]builder{
	"fashion-vqa":   buildFashionVQA,
	"fashion-cls":   buildFashionCls,
	"fashion-upper": buildFashionUpper,
	"shapes-vqa":    buildShapesVQA,
	"records":       buildRecords,
	"records-e2e":   buildRecordsKind("e2e"),
	"records-echr":  buildRecordsKind("echr"),
	"icl":           buildICL,
	"fl-mm":         buildFLMM,
}

// Tasks returns the task names, sorted.
func Tasks() []string {
	names := make([]string, 0, len(tasks))
	for n := range tasks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Build returns the data of task. It is a pure function of (task, scale,
// seed, data source, options): the same inputs give the same examples and
// fingerprint. An unknown task or scale, a bad option, an unreadable data
// directory or a source too small for the scale are errors.
func Build(task string, opt *Options) (*Dataset, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	fn, ok := tasks[task]
	if !ok {
		return nil, fmt.Errorf("datasets: unknown task %q: want one of %s", task, strings.Join(Tasks(), ", "))
	}
	scale, err := ParseScale(string(o.Scale))
	if err != nil {
		return nil, err
	}
	o.Scale = scale
	if o.Alpha == 0 {
		o.Alpha = 0.5
	}
	if !(o.Alpha > 0) || math.IsInf(o.Alpha, 0) {
		return nil, fmt.Errorf("datasets: alpha is %v, must be positive and finite", o.Alpha)
	}
	if o.Clients < 0 || o.Shots < 0 {
		return nil, fmt.Errorf("datasets: clients %d and shots %d must not be negative", o.Clients, o.Shots)
	}
	if o.Ways != 0 && (o.Ways < 2 || o.Ways > len(FashionClasses)) {
		return nil, fmt.Errorf("datasets: ways is %d, must be between 2 and %d", o.Ways, len(FashionClasses))
	}
	d := &Dataset{Task: task, Scale: scale, Seed: o.Seed}
	b := &buildCtx{opt: o, vocab: Vocab()}
	if err := fn(d, b); err != nil {
		return nil, err
	}
	d.fingerprint = d.computeFingerprint()
	return d, nil
}

// fashionPool returns the Fashion-MNIST pool for the options.
func (b *buildCtx) fashionPool(task string) (*Fashion, error) {
	dir := b.opt.DataDir
	if dir == "" && b.opt.Scale == Full {
		if !FashionDirPresent(DefaultFashionDir) {
			return nil, fmt.Errorf("datasets: %s at scale full needs the full Fashion-MNIST release (the embedded subset has only %d images): install the Debian package dataset-fashion-mnist or pass a data directory", task, embeddedFashionSz)
		}
		dir = DefaultFashionDir
	}
	return LoadFashion(dir)
}

// Fashion-MNIST images are divided once and for all between public and
// private use by a hash of their origin, whatever the task, scale, seed or
// source: about 40% are public. So a base model pretrained on any task's
// public split has never seen any task's private, holdout or test images.
func fashionIsPublic(origin int32) bool {
	x := uint64(origin) + 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return x%5 < 2
}

// fashionRoles returns the pool indices of public and private-side images in
// a random order drawn from rng.
func fashionRoles(f *Fashion, rng *rand.Rand) (public, private []int) {
	for i, o := range f.Origin {
		if fashionIsPublic(o) {
			public = append(public, i)
		} else {
			private = append(private, i)
		}
	}
	rng.Shuffle(len(public), func(i, j int) { public[i], public[j] = public[j], public[i] })
	rng.Shuffle(len(private), func(i, j int) { private[i], private[j] = private[j], private[i] })
	return public, private
}

// needImages returns an error when the pool has fewer than need images of a
// role.
func needImages(task string, scale Scale, f *Fashion, role string, have, need int) error {
	if have >= need {
		return nil
	}
	hint := ""
	if f.Source == "embedded" {
		hint = ": pass a data directory with the full release (Debian package dataset-fashion-mnist)"
	}
	return fmt.Errorf("datasets: %s at scale %s needs %d %s Fashion-MNIST images, the %s pool has %d%s", task, scale, need, role, f.Source, have, hint)
}

// privateSide are the splits drawn from the private side of the data, in
// the order they are built.
var privateSide = []string{"private", "holdout", "test"}

// splitRef returns a pointer to d's split named name; name must be one of
// SplitNames.
func (d *Dataset) splitRef(name string) *[]Example {
	switch name {
	case "public":
		return &d.Public
	case "private":
		return &d.Private
	case "holdout":
		return &d.Holdout
	case "test":
		return &d.Test
	}
	panic("datasets: unknown split " + name)
}

// size returns the number of examples of the split named name.
func (s Sizes) size(name string) int {
	switch name {
	case "public":
		return s.Public
	case "private":
		return s.Private
	case "holdout":
		return s.Holdout
	case "test":
		return s.Test
	}
	panic("datasets: unknown split " + name)
}

// buildSplits appends to each split of d named in names, in that order, as
// many examples as b.sizes gives it: mk(split, i) makes example i of split.
// mk is called in that order, split by split and i increasing, so it may
// draw from random streams and consume items as it goes.
func (b *buildCtx) buildSplits(d *Dataset, names []string, mk func(split string, i int) Example) {
	for _, name := range names {
		dst := d.splitRef(name)
		for i := range b.sizes.size(name) {
			*dst = append(*dst, mk(name, i))
		}
	}
}

// buildPoolSplits builds the four splits of an image task from the
// Fashion-MNIST pool f, one image per example: public from the first images
// of pub, then private, holdout and test from consecutive runs of priv (so
// they share no image). mk(split, i, idx) makes example i of split from pool
// image idx, in the order of buildSplits. It returns an error, before
// calling mk, if pub or priv holds too few images for b.sizes.
func (b *buildCtx) buildPoolSplits(d *Dataset, task string, f *Fashion, pub, priv []int, mk func(split string, i, idx int) Example) error {
	sz := b.sizes
	if err := needImages(task, d.Scale, f, "public", len(pub), sz.Public); err != nil {
		return err
	}
	if err := needImages(task, d.Scale, f, "private-side", len(priv), sz.Private+sz.Holdout+sz.Test); err != nil {
		return err
	}
	next := 0
	b.buildSplits(d, SplitNames, func(split string, i int) Example {
		if split == "public" {
			return mk(split, i, pub[i])
		}
		next++
		return mk(split, i, priv[next-1])
	})
	return nil
}

func fashionItem(f *Fashion, i int) string { return fmt.Sprintf("fmnist:%d", f.Origin[i]) }

func exampleID(task, split string, i int) string { return fmt.Sprintf("%s/%s/%d", task, split, i) }

// newExample returns an example with Label, Canary and Client unset (-1).
func newExample(id string) Example { return Example{ID: id, Label: -1, Canary: -1, Client: -1} }

// computeFingerprint hashes the canonical encoding.
func (d *Dataset) computeFingerprint() string {
	h := sha256.New()
	e := fpEncoder{h: h, images: make(map[*float32][sha256.Size]byte)}
	e.str("repro-datasets/1")
	e.str(Vocab().Hash())
	e.str(d.Task)
	e.str(string(d.Scale))
	e.int(int64(d.PoolImages))
	e.strs(d.Classes)
	e.strs(d.PublicClasses)
	e.strs(d.Mapping)
	e.int(int64(d.Shots))
	e.int(int64(d.Clients))
	e.int(int64(math.Float64bits(d.Alpha)))
	e.bool(d.Generative)
	for _, name := range SplitNames {
		s := d.Split(name)
		e.str(name)
		e.int(int64(len(s)))
		for i := range s {
			e.example(&s[i])
		}
	}
	e.int(int64(len(d.Canaries)))
	for i := range d.Canaries {
		c := &d.Canaries[i]
		e.str(c.ID)
		e.int(int64(c.Reps))
		e.ints(c.Secret)
		e.example(&c.Example)
	}
	return hex.EncodeToString(h.Sum(nil))
}

type fpEncoder struct {
	h   hash.Hash
	buf []byte
	// images memoises the digest of each image slice, which examples share.
	images map[*float32][sha256.Size]byte
}

func (e *fpEncoder) int(v int64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf[:0], uint64(v))
	e.h.Write(e.buf)
}

func (e *fpEncoder) bool(v bool) {
	if v {
		e.int(1)
	} else {
		e.int(0)
	}
}

func (e *fpEncoder) str(s string) {
	e.int(int64(len(s)))
	e.h.Write([]byte(s))
}

func (e *fpEncoder) strs(s []string) {
	e.int(int64(len(s)))
	for _, x := range s {
		e.str(x)
	}
}

func (e *fpEncoder) ints(s []int) {
	e.int(int64(len(s)))
	e.buf = e.buf[:0]
	for _, v := range s {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(v))
	}
	e.h.Write(e.buf)
}

func (e *fpEncoder) example(x *Example) {
	e.str(x.ID)
	e.strs(x.Items)
	e.int(int64(len(x.Images)))
	for _, img := range x.Images {
		// Each image enters as the SHA-256 of its little-endian float32 bits.
		e.int(int64(len(img)))
		if len(img) == 0 {
			continue
		}
		sum, ok := e.images[&img[0]]
		if !ok {
			e.buf = e.buf[:0]
			for _, v := range img {
				e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(v))
			}
			sum = sha256.Sum256(e.buf)
			e.images[&img[0]] = sum
		}
		e.h.Write(sum[:])
	}
	e.ints(x.Prompt)
	e.ints(x.Answer)
	e.int(int64(x.Label))
	e.str(x.Kind)
	e.bool(x.TextOnly)
	e.int(int64(len(x.PII)))
	for _, s := range x.PII {
		e.int(int64(s.Start))
		e.int(int64(s.End))
		e.str(string(s.Type))
		e.str(s.Text)
	}
	e.int(int64(x.Canary))
	e.int(int64(x.Client))
}

// Sequence returns the example's full token sequence, Prompt followed by
// Answer, in a new slice, and the loss mask over it: mask[i] reports that
// token i is an answer token, so for next-token prediction the target
// seq[i] at input position i-1 counts when mask[i] is true. PII span
// positions index this sequence. For classification examples the mask is
// all false.
func (e *Example) Sequence() (seq []int, mask []bool) {
	seq = make([]int, 0, len(e.Prompt)+len(e.Answer))
	seq = append(append(seq, e.Prompt...), e.Answer...)
	mask = make([]bool, len(seq))
	for i := len(e.Prompt); i < len(seq); i++ {
		mask[i] = true
	}
	return seq, mask
}

// Regular returns the examples of s that are not canary copies, in order,
// in a new slice: the members (of private) or non-members (of holdout) for
// membership inference.
func Regular(s []Example) []Example {
	out := make([]Example, 0, len(s))
	for _, ex := range s {
		if ex.Canary < 0 {
			out = append(out, ex)
		}
	}
	return out
}

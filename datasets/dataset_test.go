// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var smokeCache sync.Map // "task/seed" → *Dataset

// smoke returns the smoke-scale dataset of task for seed, built once per
// test binary.
func smoke(t *testing.T, task string, seed uint64) *Dataset {
	t.Helper()
	key := fmt.Sprintf("%s/%d", task, seed)
	if d, ok := smokeCache.Load(key); ok {
		return d.(*Dataset)
	}
	d, err := Build(task, &Options{Scale: Smoke, Seed: seed})
	if err != nil {
		t.Fatalf("Build(%s, smoke, seed %d): %v", task, seed, err)
	}
	smokeCache.Store(key, d)
	return d
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, task := range Tasks() {
		a := smoke(t, task, 0)
		b, err := Build(task, &Options{Scale: Smoke})
		if err != nil {
			t.Fatal(err)
		}
		if a.Fingerprint() != b.Fingerprint() || len(a.Fingerprint()) != 64 {
			t.Errorf("%s: two builds have fingerprints %s and %s", task, a.Fingerprint(), b.Fingerprint())
		}
		if c := smoke(t, task, 1); c.Fingerprint() == a.Fingerprint() {
			t.Errorf("%s: seeds 0 and 1 have the same fingerprint", task)
		}
	}
}

// TestFingerprintCoversContent checks that changing any one field of one
// example changes the fingerprint.
func TestFingerprintCoversContent(t *testing.T) {
	t.Parallel()
	base, err := Build("records", &Options{Scale: Smoke})
	if err != nil {
		t.Fatal(err)
	}
	want := base.Fingerprint()
	for _, mutate := range []func(e *Example){
		func(e *Example) { e.ID += "x" },
		func(e *Example) { e.Answer = append(slices.Clone(e.Answer), 0) },
		func(e *Example) { e.Label++ },
		func(e *Example) { e.TextOnly = !e.TextOnly },
		func(e *Example) { e.Client++ },
		func(e *Example) { e.Images = [][]float32{make([]float32, ImageLen)} },
	} {
		d := *base
		d.Test = slices.Clone(base.Test)
		mutate(&d.Test[len(d.Test)-1])
		if d.computeFingerprint() == want {
			t.Error("a mutation of the last test example left the fingerprint unchanged")
		}
	}
}

func TestExamples(t *testing.T) {
	t.Parallel()
	v := Vocab()
	for _, task := range Tasks() {
		if strings.HasSuffix(task, "-mia") || strings.HasSuffix(task, "-lira") || strings.HasSuffix(task, TuneSuffix) {
			continue // their own sizes and canaries: TestMIAVariant, TestLiRAPool, TestTuneVariant
		}
		d := smoke(t, task, 0)
		sz, err := TaskSizes(task, Smoke)
		if err != nil {
			t.Fatal(err)
		}
		copies := 0
		for _, r := range CanaryRepetitions {
			copies += r * sz.CanariesPerLevel
		}
		if n := len(Regular(d.Private)); n != sz.Private {
			t.Errorf("%s: %d regular private examples, want %d", task, n, sz.Private)
		}
		if got := []int{len(d.Public), len(d.Private), len(d.Holdout), len(d.Test)}; !slices.Equal(got, []int{sz.Public, sz.Private + copies, sz.Holdout, sz.Test}) {
			t.Errorf("%s: split sizes %v, want %v plus %d canary copies in private", task, got, sz, copies)
		}
		ids := make(map[string]bool)
		items := make(map[string]string) // item → split
		for _, split := range SplitNames {
			for i := range d.Split(split) {
				ex := &d.Split(split)[i]
				where := fmt.Sprintf("%s %s", task, ex.ID)
				if ids[ex.ID] {
					t.Fatalf("%s: duplicate ID", where)
				}
				ids[ex.ID] = true
				if ex.Canary < 0 {
					if !strings.HasPrefix(ex.ID, task+"/"+split+"/") {
						t.Errorf("%s: ID not under %s/%s/", where, task, split)
					}
					for _, it := range ex.Items {
						if s, ok := items[it]; ok && s != split || ok && split != "public" {
							t.Fatalf("%s: item %s appears in %s and %s", where, it, s, split)
						}
						items[it] = split
					}
				} else if split != "private" || d.Canaries[ex.Canary].Reps == 0 {
					t.Errorf("%s: canary copy in %s", where, split)
				}
				checkExample(t, d, split, ex, where)
			}
		}
		// Canaries: CanariesPerLevel at each level and as many references,
		// each inserted exactly Reps times.
		perLevel := make(map[int]int)
		inPrivate := make(map[int]int)
		for _, ex := range d.Private {
			if ex.Canary >= 0 {
				inPrivate[ex.Canary]++
			}
		}
		for c, can := range d.Canaries {
			perLevel[can.Reps]++
			if inPrivate[c] != can.Reps {
				t.Errorf("%s: canary %d has %d copies, want %d", task, c, inPrivate[c], can.Reps)
			}
			if can.Example.Canary != c || can.Example.Kind != "canary" {
				t.Errorf("%s: canary %d example has Canary %d, Kind %q", task, c, can.Example.Canary, can.Example.Kind)
			}
			if d.Generative {
				s := v.Decode(can.Secret)
				if len(can.Secret) != SecretDigits || !strings.HasSuffix(v.Decode(can.Example.Answer), s+" <eos>") {
					t.Errorf("%s: canary %d secret %q, answer %q", task, c, s, v.Decode(can.Example.Answer))
				}
			}
		}
		for _, r := range append(slices.Clone(CanaryRepetitions), 0) {
			if perLevel[r] != sz.CanariesPerLevel {
				t.Errorf("%s: %d canaries with %d repetitions, want %d", task, perLevel[r], r, sz.CanariesPerLevel)
			}
		}
	}
}

// checkExample checks the invariants every example of d must satisfy.
func checkExample(t *testing.T, d *Dataset, split string, ex *Example, where string) {
	t.Helper()
	v := Vocab()
	for _, img := range ex.Images {
		if len(img) != ImageLen {
			t.Fatalf("%s: image of length %d, want %d", where, len(img), ImageLen)
		}
		for _, p := range img {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("%s: pixel %v outside [0, 1]", where, p)
			}
		}
	}
	for _, id := range append(slices.Clone(ex.Prompt), ex.Answer...) {
		if id == Unk || id < 0 || id >= v.Len() {
			t.Fatalf("%s: token %d (%q) in %q", where, id, v.Word(id), v.Decode(ex.Prompt)+" | "+v.Decode(ex.Answer))
		}
	}
	placeholders := 0
	for _, id := range ex.Prompt {
		if id == Image {
			placeholders++
		}
	}
	switch {
	case d.Generative:
		if len(ex.Prompt) == 0 || ex.Prompt[0] != BOS || len(ex.Answer) < 2 || ex.Answer[len(ex.Answer)-1] != EOS {
			t.Fatalf("%s: prompt %v answer %v: want BOS first and EOS last", where, ex.Prompt, ex.Answer)
		}
		if placeholders != len(ex.Images) {
			t.Fatalf("%s: %d <image> placeholders for %d images", where, placeholders, len(ex.Images))
		}
	default:
		classes := d.Classes
		if split == "public" {
			classes = d.PublicClasses
		}
		if ex.Label < 0 || ex.Label >= len(classes) || len(ex.Images) != 1 || ex.Answer != nil || placeholders != 0 {
			t.Fatalf("%s: label %d of %d classes, %d images, answer %v, %d placeholders", where, ex.Label, len(classes), len(ex.Images), ex.Answer, placeholders)
		}
	}
	if d.Task == "fl-mm" && split == "private" {
		if ex.Client < 0 || ex.Client >= d.Clients {
			t.Fatalf("%s: client %d of %d", where, ex.Client, d.Clients)
		}
	} else if ex.Client != -1 {
		t.Fatalf("%s: client %d outside fl-mm private", where, ex.Client)
	}
	if ex.TextOnly && !strings.HasPrefix(d.Task, "fashion-vqa") && d.Task != "fl-mm" {
		t.Fatalf("%s: TextOnly in %s", where, d.Task)
	}
	seq, mask := ex.Sequence()
	want := append(slices.Clone(ex.Prompt), ex.Answer...)
	for i, m := range mask {
		if m != (i >= len(ex.Prompt)) || seq[i] != want[i] {
			t.Fatalf("%s: Sequence position %d: token %d mask %v", where, i, seq[i], m)
		}
	}
	for _, s := range ex.PII {
		if s.Start < 0 || s.End > len(seq) || s.Start >= s.End || v.Decode(seq[s.Start:s.End]) != s.Text {
			t.Fatalf("%s: span %+v does not match %q", where, s, v.Decode(seq))
		}
	}
}

// TestRecordsPII checks that every name, date and number of a record is
// marked, that spans are exact, and that public records use public names only.
func TestRecordsPII(t *testing.T) {
	t.Parallel()
	v := Vocab()
	d := smoke(t, "records", 0)
	pf, ps := PublicNames()
	qf, qs := PrivateNames()
	monthOrDigit := func(w string) bool {
		_, err := strconv.Atoi(w)
		return err == nil || slices.Contains(monthWords, w) || w == "/"
	}
	for _, split := range SplitNames {
		first, sur := qf, qs
		if split == "public" {
			first, sur = pf, ps
		}
		for _, ex := range d.Split(split) {
			if ex.Canary >= 0 {
				continue
			}
			seq := append(slices.Clone(ex.Prompt), ex.Answer...)
			marked := make([]bool, len(seq))
			names, ids := make(map[string]bool), make(map[string]bool)
			for _, s := range ex.PII {
				switch s.Type {
				case PIIName:
					names[s.Text] = true
				case PIIID:
					ids[s.Text] = true
				}
				words := strings.Fields(s.Text)
				switch s.Type {
				case PIIName:
					if len(words) != 2 || !slices.Contains(first, words[0]) || !slices.Contains(sur, words[1]) {
						t.Fatalf("%s: name %q not from the %s lists", ex.ID, s.Text, split)
					}
				case PIIDate:
					if len(words) != 3 || !slices.Contains(monthWords, words[1]) {
						t.Fatalf("%s: bad date %q", ex.ID, s.Text)
					}
				case PIIID:
					if len(words) != 8 || words[5] != "/" {
						t.Fatalf("%s: bad application number %q", ex.ID, s.Text)
					}
				default:
					t.Fatalf("%s: unknown PII type %q", ex.ID, s.Type)
				}
				for i := s.Start; i < s.End; i++ {
					marked[i] = true
				}
			}
			// Unmarked tokens are never names, digits or months, except in
			// the E2E meaning representation's fixed words.
			for i, id := range seq {
				w := v.Word(id)
				if marked[i] {
					continue
				}
				if slices.Contains(qf, w) || slices.Contains(qs, w) || slices.Contains(pf, w) || slices.Contains(ps, w) || monthOrDigit(w) {
					t.Fatalf("%s: unmarked personal token %q at %d in %q", ex.ID, w, i, v.Decode(seq))
				}
			}
			if len(ex.PII) < 2 || len(names) != 1 || len(ids) > 1 {
				t.Fatalf("%s: %d PII spans, names %v, numbers %v: want at least 2 spans about one person", ex.ID, len(ex.PII), names, ids)
			}
		}
	}
}

// TestFashionVQAAnswers recomputes every answer from the image's origin in
// the release and from its pixels.
func TestFashionVQAAnswers(t *testing.T) {
	t.Parallel()
	v := Vocab()
	f, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	label := make(map[string]int)
	for i := range f.Labels {
		label[fashionItem(f, i)] = int(f.Labels[i])
	}
	d := smoke(t, "fashion-vqa", 0)
	textOnly := 0
	for _, split := range SplitNames {
		for _, ex := range d.Split(split) {
			if ex.Canary >= 0 {
				continue
			}
			l := label[ex.Items[0]]
			ans := v.Decode(ex.Answer[:len(ex.Answer)-1])
			if split == "public" && ex.Kind != "class" && ex.Kind != "caption" {
				t.Fatalf("%s: public question of kind %s", ex.ID, ex.Kind)
			}
			var want string
			switch ex.Kind {
			case "caption":
				want = "a photo of a " + FashionClasses[l]
			case "class":
				want = FashionClasses[l]
			case "coarse":
				want = FashionCoarse[FashionCoarseOf[l]]
			case "feet":
				want = map[bool]string{true: "yes", false: "no"}[l == 5 || l == 7 || l == 9]
			case "shade":
				gray := make([]byte, 784)
				for i := range gray {
					gray[i] = byte(math.Round(float64(ex.Images[0][i]) * 255))
				}
				want = Shade(gray)
			default:
				t.Fatalf("%s: unknown kind %q", ex.ID, ex.Kind)
			}
			if ans != want {
				t.Fatalf("%s: %q → %q, want %q", ex.ID, v.Decode(ex.Prompt), ans, want)
			}
			if ex.TextOnly {
				textOnly++
				if ex.Kind == "shade" || !strings.Contains(v.Decode(ex.Prompt), "the item is a "+FashionClasses[l]+" .") {
					t.Fatalf("%s: text-only prompt %q does not state the class", ex.ID, v.Decode(ex.Prompt))
				}
			} else if strings.Contains(v.Decode(ex.Prompt), "the item is") {
				t.Fatalf("%s: image question %q states the item", ex.ID, v.Decode(ex.Prompt))
			}
		}
	}
	// A quarter are text-only: 768 draws of p = 0.25, ±5σ = ±60.
	if n := len(d.Private) + len(d.Holdout) + len(d.Test) - 21; textOnly < n/4-60 || textOnly > n/4+60 {
		t.Errorf("%d of %d examples are text-only, want about a quarter", textOnly, n)
	}
}

// TestShapesAnswers re-derives each answer from the scene layout in the
// example's item with an independent evaluator, and checks the rendering
// at each object's cell centre.
func TestShapesAnswers(t *testing.T) {
	t.Parallel()
	v := Vocab()
	d := smoke(t, "shapes-vqa", 0)
	for _, split := range SplitNames {
		for _, ex := range d.Split(split) {
			if ex.Canary >= 0 {
				continue
			}
			cells := strings.Split(strings.TrimPrefix(ex.Items[0], "shapes:"), ",")
			q := strings.TrimPrefix(v.Decode(ex.Prompt), "<bos> <image> ")
			ans := v.Decode(ex.Answer[:len(ex.Answer)-1])
			if split == "public" && !slices.Contains(publicShapeKinds, ex.Kind) && ex.Kind != "caption" {
				t.Fatalf("%s: public question of kind %s", ex.ID, ex.Kind)
			}
			if ex.Kind == "caption" {
				if want := evalCaption(cells); ans != want {
					t.Fatalf("%s: scene %v: caption %q, want %q", ex.ID, cells, ans, want)
				}
			} else if want := evalShapes(t, cells, q); ans != want {
				t.Fatalf("%s: scene %v: %q → %q, want %q", ex.ID, cells, q, ans, want)
			}
			for c, obj := range cells {
				// Jitter is at most 1.5 pixels and R ≥ 4, so the cell centre
				// is inside every circle and square, and two pixels lower is
				// inside every triangle (apex up).
				x, y := (c%2)*14+7, (c/2)*14+7
				if strings.HasSuffix(obj, ".triangle") {
					y += 2
				}
				px := [3]float32{ex.Images[0][y*28+x], ex.Images[0][784+y*28+x], ex.Images[0][2*784+y*28+x]}
				if obj == "-" {
					if px != [3]float32{} {
						t.Fatalf("%s: empty cell %d has pixel %v", ex.ID, c, px)
					}
					continue
				}
				col := slices.Index(shapeColours, strings.Split(obj, ".")[0])
				if px != shapeRGB[col] {
					t.Fatalf("%s: cell %d (%s) centre pixel %v, want %v", ex.ID, c, obj, px, shapeRGB[col])
				}
			}
		}
	}
}

// evalCaption describes the scene cells independently of Scene.Caption.
func evalCaption(cells []string) string {
	var parts []string
	for i, c := range cells {
		if c != "-" {
			p := strings.Split(c, ".")
			parts = append(parts, fmt.Sprintf("a %s %s at the %s", p[0], p[1], shapeCells[i]))
		}
	}
	return strings.Join(parts, " and ")
}

// evalShapes answers question q about the scene cells ("colour.shape" or
// "-" for each of the four cells), independently of Scene.question.
func evalShapes(t *testing.T, cells []string, q string) string {
	t.Helper()
	w := strings.Fields(q)
	count := func(col, kind string) string {
		n := 0
		for _, c := range cells {
			p := strings.Split(c, ".")
			if c != "-" && (col == "" || p[0] == col) && (kind == "" || p[1] == kind) {
				n++
			}
		}
		return numberWords[n]
	}
	singular := func(plural string) string { return strings.TrimSuffix(plural, "s") }
	switch {
	case q == "how many objects are there ?":
		return count("", "")
	case w[0] == "how" && len(w) == 7 && w[3] == "objects":
		return count(w[2], "")
	case w[0] == "how" && len(w) == 6:
		return count("", singular(w[2]))
	case w[0] == "how" && len(w) == 7:
		return count(w[2], singular(w[3]))
	case w[0] == "is":
		return map[bool]string{true: "yes", false: "no"}[count(w[3], w[4]) != "zero"]
	case w[0] == "what":
		cell := slices.Index(shapeCells, w[len(w)-3]+" "+w[len(w)-2])
		if cells[cell] == "-" {
			return "nothing"
		}
		p := strings.Split(cells[cell], ".")
		if w[1] == "colour" {
			return p[0]
		}
		return p[1]
	}
	t.Fatalf("unknown question %q", q)
	return ""
}

// iclLayout reports whether the decoded prompt pw is
// "<bos> (<image> w ;)×shots <image>" with n tokens in every w.
func iclLayout(pw []string, shots, n int) bool {
	if len(pw) != 1+shots*(n+2)+1 || pw[0] != "<bos>" || pw[len(pw)-1] != "<image>" {
		return false
	}
	for i := range shots {
		demo := pw[1+i*(n+2) : 1+(i+1)*(n+2)]
		if demo[0] != "<image>" || demo[n+1] != ";" {
			return false
		}
		for _, w := range demo[1 : n+1] {
			if w == "<image>" || w == ";" || strings.HasPrefix(w, "<") {
				return false
			}
		}
	}
	return true
}

// TestICLEpisodes checks the layout of every episode's prompt and the
// label mappings: consistent within every
// episode, drawn afresh per public episode (so a word says nothing about a
// class across episodes), fixed for the private task.
func TestICLEpisodes(t *testing.T) {
	t.Parallel()
	v := Vocab()
	f, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	label := make(map[string]int)
	for i := range f.Labels {
		label[fashionItem(f, i)] = int(f.Labels[i])
	}
	d := smoke(t, "icl", 0)
	wordsOfClass := make(map[int]map[string]int)
	queries := make(map[int]int) // private-side query class counts
	for _, split := range SplitNames {
		for _, ex := range d.Split(split) {
			nw := 1 // tokens of a label word; a canary's secret has SecretDigits
			if ex.Canary >= 0 {
				nw = SecretDigits
			}
			if pw := strings.Fields(v.Decode(ex.Prompt)); !iclLayout(pw, d.Shots, nw) {
				t.Fatalf("%s: prompt %q, want <bos> (<image> w ;)×%d <image> with %d-token words", ex.ID, pw, d.Shots, nw)
			}
			if ex.Canary >= 0 {
				continue
			}
			if len(ex.Images) != d.Shots+1 || len(ex.Items) != d.Shots+1 {
				t.Fatalf("%s: %d images, want %d shots + 1", ex.ID, len(ex.Images), d.Shots)
			}
			// Words after each image, in order: demos then the answer.
			var words []string
			pw := strings.Fields(v.Decode(ex.Prompt))
			for i, w := range pw {
				if w == "<image>" && i+1 < len(pw) {
					words = append(words, pw[i+1])
				}
			}
			words = append(words, v.Decode(ex.Answer[:1]))
			wordOf := make(map[int]string)
			classOf := make(map[string]int)
			for i, it := range ex.Items {
				c, w := label[it], words[i]
				if prev, ok := wordOf[c]; ok && prev != w || classOf[w] != 0 && classOf[w] != c+1 {
					t.Fatalf("%s: inconsistent mapping %q", ex.ID, v.Decode(ex.Prompt)+" | "+v.Decode(ex.Answer))
				}
				wordOf[c], classOf[w] = w, c+1
			}
			if len(wordOf) != episodeWays[Smoke] || len(d.Classes) != episodeWays[Smoke] {
				t.Fatalf("%s: %d classes in the episode, want %d", ex.ID, len(wordOf), episodeWays[Smoke])
			}
			q := label[ex.Items[d.Shots]]
			if split == "public" {
				if wordsOfClass[q] == nil {
					wordsOfClass[q] = make(map[string]int)
				}
				wordsOfClass[q][wordOf[q]]++
				continue
			}
			queries[ex.Label]++
			if d.Classes[ex.Label] != FashionClasses[q] || wordOf[q] != d.Mapping[ex.Label] {
				t.Fatalf("%s: query class %s word %s, want the fixed mapping %v → %v", ex.ID, FashionClasses[q], wordOf[q], d.Classes, d.Mapping)
			}
		}
	}
	lo, hi := math.MaxInt, 0
	for _, n := range queries {
		lo, hi = min(lo, n), max(hi, n)
	}
	if len(queries) != len(d.Classes) || hi-lo > 1 {
		t.Errorf("private-side query classes %v: want each of %d classes equally often (±1)", queries, len(d.Classes))
	}
	// Across public episodes a class's answer word is uniform over the 32
	// label words: with about 25 queries per class the most frequent word
	// having over a third of them has negligible probability (binomial tail
	// below 1e-6 per class), whereas a fixed mapping would give all of them.
	for c, counts := range wordsOfClass {
		n, top := 0, 0
		for _, k := range counts {
			n += k
			top = max(top, k)
		}
		if n < 10 || 3*top > n {
			t.Errorf("class %s: most frequent answer word has %d of %d public queries", FashionClasses[c], top, n)
		}
	}
}

// TestFLMMPartition checks that small α skews the clients' label
// distributions and large α does not.
func TestFLMMPartition(t *testing.T) {
	t.Parallel()
	skew := func(alpha float64) float64 {
		d, err := Build("fl-mm", &Options{Scale: Smoke, Alpha: alpha, Clients: 4})
		if err != nil {
			t.Fatal(err)
		}
		counts := make([][]int, d.Clients)
		for i := range counts {
			counts[i] = make([]int, len(d.Classes))
		}
		for _, ex := range d.Private {
			counts[ex.Client][ex.Label]++
		}
		// Mean over clients of the largest class share.
		s := 0.0
		for _, c := range counts {
			n, top := 0, 0
			for _, k := range c {
				n += k
				top = max(top, k)
			}
			if n == 0 {
				t.Fatalf("α = %v: empty client", alpha)
			}
			s += float64(top) / float64(n)
		}
		return s / float64(d.Clients)
	}
	lo, hi := skew(0.05), skew(1000)
	// IID: about 1/10 plus sampling noise; α = 0.05: most clients hold few
	// classes.
	if hi > 0.2 || lo < 0.35 {
		t.Errorf("largest class share: %.3f at α = 0.05, %.3f at α = 1000; want > 0.35 and < 0.2", lo, hi)
	}
}

// ks returns the two-sample Kolmogorov–Smirnov statistic of a and b.
func ks(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	i, j, d := 0, 0, 0.0
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// ksCritical is the asymptotic critical value of the two-sample KS test at
// level α: c(α)·√((n+m)/(nm)) with c(α) = √(−ln(α/2)/2) (Smirnov; the
// asymptotic test is conservative for discrete features).
func ksCritical(alpha float64, n, m int) float64 {
	return math.Sqrt(-math.Log(alpha/2)/2) * math.Sqrt(float64(n+m)/float64(n*m))
}

// features returns scalar features of the regular examples of s.
func features(s []Example) map[string][]float64 {
	out := make(map[string][]float64)
	for _, ex := range s {
		if ex.Canary >= 0 {
			continue
		}
		out["prompt length"] = append(out["prompt length"], float64(len(ex.Prompt)))
		out["answer length"] = append(out["answer length"], float64(len(ex.Answer)))
		out["label"] = append(out["label"], float64(ex.Label))
		if len(ex.Answer) > 0 {
			out["first answer token"] = append(out["first answer token"], float64(ex.Answer[0]))
		}
		if len(ex.Images) > 0 {
			m := 0.0
			for _, p := range ex.Images[len(ex.Images)-1] {
				m += float64(p)
			}
			out["image mean"] = append(out["image mean"], m/ImageLen)
		}
	}
	return out
}

// TestSameDistribution checks that private train (members) and holdout
// (non-members) come from one distribution, so membership inference measures
// memorisation: two-sample KS tests on up to five features per task at
// level 1e-3 each (27 tests, so by the union bound a correct generator fails
// with probability at most 2.7e-2 for a random seed; the seed is fixed, so
// the outcome is deterministic). A control shows the test rejects a real
// shift.
func TestSameDistribution(t *testing.T) {
	t.Parallel()
	const alpha = 1e-3
	for _, task := range Tasks() {
		d := smoke(t, task, 0)
		p, h := features(d.Private), features(d.Holdout)
		for name, a := range p {
			b := h[name]
			if stat, crit := ks(a, b), ksCritical(alpha, len(a), len(b)); stat > crit {
				t.Errorf("%s: %s: KS statistic %.3f > critical %.3f: private and holdout differ", task, name, stat, crit)
			}
		}
	}
	// Control: shapes scenes against fashion images differ in mean intensity.
	a := features(smoke(t, "shapes-vqa", 0).Holdout)["image mean"]
	b := features(smoke(t, "fashion-vqa", 0).Holdout)["image mean"]
	if stat, crit := ks(a, b), ksCritical(alpha, len(a), len(b)); stat <= crit {
		t.Errorf("control: KS statistic %.3f ≤ critical %.3f for shapes against fashion images", stat, crit)
	}
}

func TestKS(t *testing.T) {
	t.Parallel()
	// Closed form: disjoint samples give D = 1; identical samples give 0;
	// {1,2,3,4} against {3,4,5,6}: the CDFs differ by 1/2 at x ∈ [2, 3).
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2}, []float64{3, 4}, 1},
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, 0},
		{[]float64{1, 2, 3, 4}, []float64{3, 4, 5, 6}, 0.5},
	} {
		if got := ks(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ks(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// c(0.05) = 1.358 (Smirnov's table value for α = 0.05).
	if got := ksCritical(0.05, 1, 1) / math.Sqrt(2); math.Abs(got-1.358) > 1e-3 {
		t.Errorf("c(0.05) = %.4f, want 1.358", got)
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		task string
		opt  *Options
		want string
	}{
		{"nope", nil, `unknown task "nope": want one of fashion-cls, fashion-cls-lira, fashion-cls-tune, fashion-upper, fashion-upper-tune, fashion-vqa, fashion-vqa-lira, fashion-vqa-mia, fashion-vqa-tune, fashion-vqa-tune-lira, fl-mm, fl-mm-tune, icl, records, records-e2e, records-echr, shapes-vqa, shapes-vqa-lira, shapes-vqa-mia, shapes-vqa-tune, shapes-vqa-tune-lira`},
		{"records", &Options{Scale: "huge"}, `unknown scale "huge": want one of smoke, small, full`},
		{"fl-mm", &Options{Alpha: -1}, "alpha is -1"},
		{"fl-mm", &Options{Alpha: math.Inf(1)}, "alpha is +Inf"},
		{"icl", &Options{Scale: Smoke, Shots: 2}, "needs at least 3 shots"},
		{"icl", &Options{Scale: Smoke, Ways: 1}, "ways is 1"},
		{"icl", &Options{Scale: Smoke, Ways: 4, Shots: 3}, "needs at least 4 shots for 4 ways"},
		{"fl-mm", &Options{Scale: Smoke, Clients: 257}, "too few for 257 clients"},
		{"icl", &Options{Scale: Small, Shots: 64}, "pass a data directory with the full release"},
		{"fashion-cls", &Options{Scale: Smoke, DataDir: t.TempDir()}, "missing Fashion-MNIST file"},
	} {
		_, err := Build(tc.task, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "datasets: ") {
			t.Errorf("Build(%s, %+v): got error %v, want one containing %q", tc.task, tc.opt, err, tc.want)
		}
	}
	if _, err := TaskSizes("records", ""); err == nil {
		t.Error(`TaskSizes("records", ""): got nil error`)
	}
	if _, err := TaskSizes("x", Small); err == nil {
		t.Error(`TaskSizes("x", small): got nil error`)
	}
	if !FashionDirPresent(DefaultFashionDir) {
		_, err := Build("fashion-vqa", &Options{Scale: Full})
		if err == nil || !strings.Contains(err.Error(), "dataset-fashion-mnist") {
			t.Errorf("full scale without the release: got error %v, want one naming dataset-fashion-mnist", err)
		}
	}
}

// TestFullRelease builds the image tasks from Debian's files.
func TestFullRelease(t *testing.T) {
	if !FashionDirPresent(DefaultFashionDir) {
		t.Skip("full Fashion-MNIST not installed in " + DefaultFashionDir)
	}
	if testing.Short() {
		t.Skip("decodes the full release")
	}
	d, err := Build("fashion-cls", &Options{Scale: Smoke, DataDir: DefaultFashionDir})
	if err != nil {
		t.Fatal(err)
	}
	if d.Source != DefaultFashionDir || d.Fingerprint() == smoke(t, "fashion-cls", 0).Fingerprint() {
		t.Errorf("source %q, fingerprint %s: want the release directory and a fingerprint unlike the embedded one", d.Source, d.Fingerprint())
	}
	// Public and private roles of an image agree between sources.
	f, _ := LoadFashion(DefaultFashionDir)
	public := 0
	for _, o := range f.Origin {
		if fashionIsPublic(o) {
			public++
		}
	}
	// 70000 draws of p = 0.4: ±5σ = ±648.
	if public < 28000-648 || public > 28000+648 {
		t.Errorf("%d of 70000 images are public, want about 40%%", public)
	}
}

// TestPublicRoles checks that public examples use only public items and the
// other splits only private ones, by the fixed role hashes, so no seed's
// public data is another seed's private data.
func TestPublicRoles(t *testing.T) {
	t.Parallel()
	for _, task := range []string{"fashion-vqa", "fashion-cls", "fashion-upper", "icl", "fl-mm", "shapes-vqa"} {
		d := smoke(t, task, 0)
		for _, split := range SplitNames {
			for _, ex := range d.Split(split) {
				if ex.Canary >= 0 {
					continue
				}
				for _, it := range ex.Items {
					var public bool
					if o, ok := strings.CutPrefix(it, "fmnist:"); ok {
						n, err := strconv.Atoi(o)
						if err != nil {
							t.Fatalf("%s: bad item %q", ex.ID, it)
						}
						public = fashionIsPublic(int32(n))
					} else {
						public = isPublicKey(it)
					}
					if public != (split == "public") {
						t.Fatalf("%s: item %s has public role %v in split %s", ex.ID, it, public, split)
					}
				}
			}
		}
	}
}

// TestICLSeeds builds icl at the default scale for several seeds: the
// balanced design never runs out of images.
func TestICLSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds icl at small scale ten times")
	}
	t.Parallel()
	for seed := range uint64(10) {
		if _, err := Build("icl", &Options{Seed: seed}); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}

func TestICLWays(t *testing.T) {
	t.Parallel()
	d, err := Build("icl", &Options{Scale: Smoke, Ways: 2, Shots: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Classes) != 2 || len(d.Mapping) != 2 || d.Shots != 6 || len(d.Public[0].Images) != 7 {
		t.Errorf("ways 2, shots 6: classes %v, mapping %v, shots %d, %d images per episode", d.Classes, d.Mapping, d.Shots, len(d.Public[0].Images))
	}
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Info summarises a Dataset for people and scripts (repro data info).
type Info struct {
	Task        string `json:"task"`
	Scale       Scale  `json:"scale"`
	Seed        uint64 `json:"seed"`
	Source      string `json:"source"`
	PoolImages  int    `json:"pool_images,omitempty"`
	Fingerprint string `json:"fingerprint"`
	// Splits maps each split to its number of examples (private includes
	// canary copies).
	Splits    map[string]int `json:"splits"`
	VocabSize int            `json:"vocab_size"`
	// Balance maps each split to the count of each class: the label name for
	// classification, the answer text for short answers, else the kind.
	// Canary copies are not counted.
	Balance map[string]map[string]int `json:"balance"`
	// Canaries maps repetitions (0 = reference, not inserted) to the number
	// of canaries; CanaryCopies is the number of copies in private.
	Canaries     map[int]int `json:"canaries"`
	CanaryCopies int         `json:"canary_copies"`
	TextOnly     int         `json:"text_only,omitempty"`
	Shots        int         `json:"shots,omitempty"`
	Clients      int         `json:"clients,omitempty"`
	Alpha        float64     `json:"alpha,omitempty"`
	// ClientSizes is the number of private examples of each fl-mm client,
	// canary copies included.
	ClientSizes []int `json:"client_sizes,omitempty"`
}

// Info returns the summary of d.
func (d *Dataset) Info() Info {
	v := Vocab()
	in := Info{
		Task: d.Task, Scale: d.Scale, Seed: d.Seed, Source: d.Source, PoolImages: d.PoolImages, Fingerprint: d.fingerprint,
		Splits: map[string]int{}, VocabSize: v.Len(), Balance: map[string]map[string]int{},
		Canaries: map[int]int{}, Shots: d.Shots, Clients: d.Clients, Alpha: d.Alpha,
	}
	if d.Clients > 0 {
		in.ClientSizes = make([]int, d.Clients)
	}
	for _, name := range SplitNames {
		s := d.Split(name)
		in.Splits[name] = len(s)
		bal := map[string]int{}
		classes := d.Classes
		if name == "public" {
			classes = d.PublicClasses
		}
		for i := range s {
			ex := &s[i]
			if ex.Client >= 0 && ex.Client < len(in.ClientSizes) {
				in.ClientSizes[ex.Client]++
			}
			if ex.Canary >= 0 {
				in.CanaryCopies++
				continue
			}
			if ex.TextOnly {
				in.TextOnly++
			}
			bal[classKey(ex, classes, v)]++
		}
		in.Balance[name] = bal
	}
	for _, c := range d.Canaries {
		in.Canaries[c.Reps]++
	}
	return in
}

func classKey(ex *Example, classes []string, v *Vocabulary) string {
	switch {
	case ex.Label >= 0 && ex.Label < len(classes):
		return classes[ex.Label]
	case ex.Answer != nil && len(ex.Answer) <= 2:
		return v.Decode(ex.Answer[:len(ex.Answer)-1])
	}
	return ex.Kind
}

// WriteText writes in as a human-readable report. Balances with many
// classes list the eight most frequent.
func (in Info) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "task         %s\n", in.Task)
	fmt.Fprintf(&b, "scale        %s\n", in.Scale)
	fmt.Fprintf(&b, "seed         %d\n", in.Seed)
	if in.PoolImages > 0 {
		fmt.Fprintf(&b, "source       %s (%d Fashion-MNIST images)\n", in.Source, in.PoolImages)
	} else {
		fmt.Fprintf(&b, "source       %s\n", in.Source)
	}
	fmt.Fprintf(&b, "vocabulary   %d tokens\n", in.VocabSize)
	if in.Shots > 0 {
		fmt.Fprintf(&b, "shots        %d per episode\n", in.Shots)
	}
	if in.Clients > 0 {
		fmt.Fprintf(&b, "clients      %d (Dirichlet α = %g), private sizes %v\n", in.Clients, in.Alpha, in.ClientSizes)
	}
	if in.TextOnly > 0 {
		fmt.Fprintf(&b, "text-only    %d examples answerable from the text alone\n", in.TextOnly)
	}
	b.WriteString("splits\n")
	for _, name := range SplitNames {
		fmt.Fprintf(&b, "  %-8s %7d  %s\n", name, in.Splits[name], balanceLine(in.Balance[name]))
	}
	fmt.Fprintf(&b, "canaries     %d×1, %d×4, %d×16 inserted (%d copies in private), %d reference\n",
		in.Canaries[1], in.Canaries[4], in.Canaries[16], in.CanaryCopies, in.Canaries[0])
	fmt.Fprintf(&b, "fingerprint  %s\n", in.Fingerprint)
	_, err := io.WriteString(w, b.String())
	return err
}

func balanceLine(bal map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var s []kv
	total := 0
	for k, n := range bal {
		s = append(s, kv{k, n})
		total += n
	}
	slices.SortFunc(s, func(a, b kv) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.k, b.k))
	})
	var parts []string
	for i, e := range s {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", len(s)-8))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", e.k, 100*float64(e.n)/float64(total)))
	}
	return strings.Join(parts, ", ")
}

// WriteExamples writes the first n examples of each split of d, decoded, one
// per line: ID, kind, flags, prompt, answer or label.
func (d *Dataset) WriteExamples(w io.Writer, n int) error {
	v := Vocab()
	var b strings.Builder
	for _, name := range SplitNames {
		classes := d.Classes
		if name == "public" {
			classes = d.PublicClasses
		}
		s := d.Split(name)
		for i := range min(n, len(s)) {
			ex := &s[i]
			fmt.Fprintf(&b, "%s [%s", ex.ID, ex.Kind)
			if ex.TextOnly {
				b.WriteString(", text-only")
			}
			if ex.Client >= 0 {
				fmt.Fprintf(&b, ", client %d", ex.Client)
			}
			fmt.Fprintf(&b, ", %d images]", len(ex.Images))
			if len(ex.Prompt) > 0 {
				fmt.Fprintf(&b, " %s", v.Decode(ex.Prompt))
			}
			if ex.Answer != nil {
				fmt.Fprintf(&b, " → %s", v.Decode(ex.Answer))
			}
			if ex.Label >= 0 {
				label := strconv.Itoa(ex.Label)
				if ex.Label < len(classes) {
					label = classes[ex.Label]
				}
				fmt.Fprintf(&b, " → label %s", label)
			}
			for _, s := range ex.PII {
				fmt.Fprintf(&b, " {%s %d:%d %q}", s.Type, s.Start, s.End, s.Text)
			}
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

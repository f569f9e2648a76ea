// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"slices"
	"strings"
	"testing"
)

func TestSpecialIDs(t *testing.T) {
	t.Parallel()
	v := Vocab()
	// Fixed by the lead's cross-package conventions.
	for id, w := range map[int]string{0: "<pad>", 1: "<unk>", 2: "<bos>", 3: "<eos>", 4: "<image>", 5: "<sep>", 6: "<mask>"} {
		if got := v.Word(id); got != w {
			t.Errorf("Word(%d) = %q, want %q", id, got, w)
		}
		if got, ok := v.ID(w); !ok || got != id {
			t.Errorf("ID(%q) = %d, %v; want %d, true", w, got, ok, id)
		}
	}
	if Pad != 0 || Unk != 1 || BOS != 2 || EOS != 3 || Image != 4 || Sep != 5 || Mask != 6 {
		t.Error("special id constants changed")
	}
}

func TestVocabularyDeterministic(t *testing.T) {
	t.Parallel()
	v := Vocab()
	w := buildVocabulary()
	if !slices.Equal(v.Words(), w.Words()) || v.Hash() != w.Hash() {
		t.Fatal("two builds of the vocabulary differ")
	}
	if !slices.IsSorted(v.Words()[len(Specials):]) {
		t.Error("words after the specials are not sorted")
	}
	seen := make(map[string]bool)
	for _, w := range v.Words() {
		if seen[w] {
			t.Errorf("word %q appears twice", w)
		}
		seen[w] = true
		if w == "" || strings.ContainsAny(w, " \t\n") {
			t.Errorf("bad token %q", w)
		}
	}
	// Name lists are disjoint and distinct from every other word.
	pf, ps := PublicNames()
	qf, qs := PrivateNames()
	pub := append(pf, ps...)
	for _, w := range append(qf, qs...) {
		if slices.Contains(pub, w) {
			t.Errorf("name %q is both public and private", w)
		}
	}
	fixed := make(map[string]bool)
	for _, w := range fixedWords() {
		for _, t := range splitWords(w) {
			fixed[t] = true
		}
	}
	for _, w := range append(append(pub, qf...), append(qs, LabelWords()...)...) {
		if fixed[w] {
			t.Errorf("generated word %q collides with a fixed word", w)
		}
	}
}

// TestVocabularyHash pins the vocabulary. Changing any word list changes it
// and invalidates every pretrained checkpoint; update the value on purpose
// only.
func TestVocabularyHash(t *testing.T) {
	t.Parallel()
	const want = "d4aa5a586a6fdf0fce70072c2ed8319fec850a45b257fc66ff86e11b4c18b1d6"
	if got := Vocab().Hash(); got != want {
		t.Errorf("vocabulary hash %s (%d tokens), want %s", got, Vocab().Len(), want)
	}
}

func TestSplitWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  Hello,  World! ", []string{"hello", ",", "world", "!"}},
		{"<bos> <image> what is it?", []string{"<bos>", "<image>", "what", "is", "it", "?"}},
		{"a<image>b", []string{"a", "<image>", "b"}},
		{"<notspecial> x", []string{"<", "notspecial", ">", "x"}},
		{"2 / 19 t-shirt don't", []string{"2", "/", "19", "t-shirt", "don't"}},
		{"Café Ünïcode", []string{"café", "ünïcode"}},
		{"\xff bad", []string{"\uFFFD", "bad"}}, // ToLower replaces invalid UTF-8
	} {
		if got := splitWords(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	t.Parallel()
	v := Vocab()
	text := "<bos> <image> what is the item ? sneaker <eos>"
	ids := v.Encode(nil, text)
	if ids[0] != BOS || ids[1] != Image || ids[len(ids)-1] != EOS {
		t.Errorf("Encode(%q) = %v, want BOS, Image first and EOS last", text, ids)
	}
	if got := v.Decode(ids); got != text {
		t.Errorf("Decode(Encode(%q)) = %q", text, got)
	}
	if got := v.Encode([]int{Pad}, "zzzunknownzzz"); !slices.Equal(got, []int{Pad, Unk}) {
		t.Errorf("unknown word: got %v, want [0 1]", got)
	}
	if got := v.Word(-1) + v.Word(v.Len()); got != "<unk><unk>" {
		t.Errorf("out-of-range ids decode to %q, want <unk>", got)
	}
}

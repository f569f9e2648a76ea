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
	fixed := fixedSet()
	for _, w := range slices.Concat(pub, qf, qs, LabelWords()) {
		if fixed[w] {
			t.Errorf("generated word %q collides with a fixed word", w)
		}
	}
}

// fixedSet returns the words of the hand-written lists and templates.
func fixedSet() map[string]bool {
	fixed := make(map[string]bool)
	for _, w := range fixedWords() {
		for _, t := range splitWords(w) {
			fixed[t] = true
		}
	}
	return fixed
}

// TestNamePieces checks how names are spelled: every name of the four
// lists is two tokens, a head and a continuation piece, that decode back
// to the name; no name is a token itself; every piece of a private name
// occurs in a public name (of either kind), so private names are new
// combinations of pieces the base model was pretrained on; and the lists
// have the documented sizes and no repeats.
func TestNamePieces(t *testing.T) {
	t.Parallel()
	v := Vocab()
	pf, ps := PublicNames()
	qf, qs := PrivateNames()
	heads, tails := NamePieces()
	if len(pf) != numFirstNames/2 || len(qf) != numFirstNames/2 || len(ps) != numSurnames/2 || len(qs) != numSurnames/2 {
		t.Fatalf("list sizes %d, %d, %d, %d", len(pf), len(qf), len(ps), len(qs))
	}
	public := make(map[int]bool)
	for _, list := range [][]string{pf, ps, qf, qs} {
		for _, n := range list {
			if _, ok := v.ID(n); ok {
				t.Errorf("name %q is a token of the vocabulary", n)
			}
			ids := v.Encode(nil, n)
			if len(ids) != 2 || !slices.Contains(heads, v.Word(ids[0])) || !slices.Contains(tails, v.Word(ids[1])) {
				t.Errorf("name %q encodes to %q, want a head and a tail", n, strings.Fields(decodeEach(v, ids)))
			}
			if got := v.Decode(ids); got != n {
				t.Errorf("Decode(Encode(%q)) = %q", n, got)
			}
		}
	}
	for _, n := range slices.Concat(pf, ps) {
		for _, id := range v.Encode(nil, n) {
			public[id] = true
		}
	}
	for _, p := range slices.Concat(heads, tails) {
		if id, ok := v.ID(p); !ok || !public[id] {
			t.Errorf("piece %q (in the vocabulary: %v) is in no public name", p, ok)
		}
	}
	for _, n := range slices.Concat(qf, qs) {
		for _, id := range v.Encode(nil, n) {
			if !public[id] {
				t.Errorf("private name %q has piece %q seen in no public name", n, v.Word(id))
			}
		}
	}
	for _, list := range [][]string{slices.Concat(pf, qf), slices.Concat(ps, qs)} {
		seen := make(map[string]bool)
		for _, n := range list {
			if seen[n] {
				t.Errorf("name %q listed twice", n)
			}
			seen[n] = true
		}
	}
}

// decodeEach returns the tokens of ids separated by spaces, pieces kept.
func decodeEach(v *Vocabulary, ids []int) string {
	w := make([]string, len(ids))
	for i, id := range ids {
		w[i] = v.Word(id)
	}
	return strings.Join(w, " ")
}

// TestVocabularyHash pins the vocabulary. Changing any word list changes it
// and invalidates every pretrained checkpoint; update the value on purpose
// only.
func TestVocabularyHash(t *testing.T) {
	t.Parallel()
	const want = "84f7fd79f4743a2509b64ddb9d25c18a12e891b6523bcce4c95f2b3e4e3ce896"
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

// TestSplitPieces checks the WordPiece split on a toy vocabulary: greedy
// longest match from the left, continuation pieces after the first, nil
// when a part matches nothing (worked by hand).
func TestSplitPieces(t *testing.T) {
	t.Parallel()
	vocab := map[string]bool{"bra": true, "brai": true, "##tha": true, "##ha": true, "##n": true, "##ithan": true, "tha": true}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"braithan", []string{"brai", "##tha", "##n"}},
		{"brathan", []string{"bra", "##tha", "##n"}},
		{"braha", []string{"bra", "##ha"}},
		{"tha", []string{"tha"}},
		{"thax", nil},
		{"xbra", nil},
		{"", nil},
	} {
		if got := splitPieces(tc.word, vocab); !slices.Equal(got, tc.want) {
			t.Errorf("splitPieces(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestEncodePieces checks the round trip of text with names: Encode
// splits a name into its pieces inside a sentence, Decode joins them, and
// a word no piece can spell stays Unk.
func TestEncodePieces(t *testing.T) {
	t.Parallel()
	v := Vocab()
	pf, _ := PublicNames()
	_, qs := PrivateNames()
	text := "<bos> the applicant , " + pf[0] + " " + qs[0] + " , was born on 3 may 1960 . <eos>"
	ids := v.Encode(nil, text)
	if got := v.Decode(ids); got != text {
		t.Errorf("Decode(Encode(%q)) = %q", text, got)
	}
	if n := len(ids) - len(splitWords(text)); n != 2 {
		t.Errorf("Encode(%q): %d tokens for %d words, want 2 more (two names of two pieces)", text, len(ids), len(splitWords(text)))
	}
	if slices.Contains(ids, Unk) {
		t.Errorf("Encode(%q) = %v has Unk", text, ids)
	}
	if got := v.Encode(nil, "qqq"); !slices.Equal(got, []int{Unk}) {
		t.Errorf("Encode(qqq) = %v, want [Unk]", got)
	}
}

// TestNameListsDeterministic checks that the name lists are drawn from a
// fixed stream: two builds give the same lists in the same order.
func TestNameListsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := buildWordLists(), buildWordLists()
	for _, p := range [][2][]string{
		{a.publicFirst, b.publicFirst}, {a.privateFirst, b.privateFirst},
		{a.publicSurname, b.publicSurname}, {a.privateSurname, b.privateSurname},
		{a.heads, b.heads}, {a.tails, b.tails},
	} {
		if !slices.Equal(p[0], p[1]) {
			t.Errorf("two builds differ: %q and %q", p[0], p[1])
		}
	}
}

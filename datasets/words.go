// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Word lists of the generators. Every word any task can emit is listed here
// or derived here, so the vocabulary covers all tasks.
var (
	shapeColours = []string{"red", "green", "blue", "yellow", "purple", "cyan"}
	shapeKinds   = []string{"circle", "square", "triangle"}
	shapePlural  = []string{"circles", "squares", "triangles"}
	shapeCells   = []string{"top left", "top right", "bottom left", "bottom right"}
	numberWords  = []string{"zero", "one", "two", "three", "four"}
	monthWords   = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	foodWords    = []string{"italian", "french", "chinese", "indian", "japanese", "english", "fast food"}
	eatTypes     = []string{"restaurant", "pub", "coffee shop"}
	priceWords   = []string{"cheap", "moderate", "expensive"}
	areaWords    = []string{"riverside", "city centre"}
	ratingWords  = []string{"low", "average", "high"}
)

// Year range of dates in records (inclusive).
const (
	firstYear = 1950
	lastYear  = 2023
)

// templateText holds every fixed sentence and question of the generators;
// only its words matter for the vocabulary.
var templateText = []string{
	// fashion-vqa and fashion-cls.
	"what is the item ? what kind of item is it ? is the item worn on the feet ? is the item light or dark ?",
	"the item is a . yes no light dark describe the item . a photo of a",
	// shapes-vqa.
	"how many objects are there ? is there a ? what colour is the object at the ? what shape is the object ? nothing describe the scene . and",
	// records.
	"the applicant , , was born on and lives in . on , the applicant was arrested by the police in .",
	"the court notes that lodged application no on . the applicant , , complained about the length of the proceedings .",
	"the case originated in an application against the state lodged by on . the government contested the claim of .",
	"name [ ] eattype food pricerange area rating owner is a an in the with a customer rating , owned by serving food .",
	// canaries.
	"the secret code is what is the secret code ?",
	// icl (";" separates demonstrations; "means" is no longer in the
	// format but stays so that every token id and the vocabulary hash
	// stay as they were).
	"means ;",
	// application numbers.
	"/",
	// fl-mm captions.
	"a photo of some an item an upper garment a long garment some footwear an accessory",
}

// Syllables for generated words; none of the results is copied from a list
// of real names.
var (
	nameOnsets  = []string{"b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kl", "st", "th"}
	nameNuclei  = []string{"a", "e", "i", "o", "u", "ai", "ei", "ou"}
	nameCodas   = []string{"", "n", "r", "l", "s", "m", "th", "nd"}
	labelOnsets = []string{"bl", "gr", "pl", "sk", "sn", "tw", "wr", "zw", "j", "w", "y", "x"}
	labelNuclei = []string{"a", "i", "o", "u", "e"}
	labelCodas  = []string{"p", "x", "g", "b", "ck", "ff", "zz"}
)

// Sizes of the generated lists. Public and private name lists are disjoint
// halves of the names. Every name is two sub-word pieces: a head (one
// syllable, a word of the vocabulary) and a tail (a syllable and a coda,
// with "ov" after it for surnames, a continuation piece "##tail" of the
// vocabulary); heads are shared by first names and surnames.
const (
	numFirstNames  = 160
	numSurnames    = 160
	numNameHeads   = 16
	numNameTails   = 16
	numPlaces      = 24
	numVenues      = 32
	numLabelWords  = 32
	nameListStream = 0x6e616d6573 // "names"
)

// PieceMark starts a continuation piece: "##ra" is "ra" appended to the
// piece before it without a space (the WordPiece convention of BERT).
const PieceMark = "##"

// wordLists are the generated lists, built once.
type wordLists struct {
	publicFirst, privateFirst     []string
	publicSurname, privateSurname []string
	places, venues, labels        []string
	// heads are the names' first pieces (whole words), tails their
	// continuation pieces, PieceMark included.
	heads, tails []string
}

var listsOnce = sync.OnceValue(buildWordLists)

func lists() *wordLists { return listsOnce() }

// buildWordLists draws the generated lists from a fixed stream: places,
// venues and label words first, then the name pieces, then the names, so
// that no generated word collides with another or with a fixed word, and
// every name splits into its own head and tail (see splitPieces).
func buildWordLists() *wordLists {
	rng := rand.New(rand.NewPCG(1, nameListStream))
	// taken holds every whole word so generated words never collide with one.
	taken := make(map[string]bool)
	for _, w := range fixedWords() {
		for _, t := range splitWords(w) {
			taken[t] = true
		}
	}
	gen := func(n int, onsets, nuclei, codas []string, syl int, suffix string) []string {
		var out []string
		for len(out) < n {
			var b strings.Builder
			for range syl {
				b.WriteString(onsets[rng.IntN(len(onsets))])
				b.WriteString(nuclei[rng.IntN(len(nuclei))])
			}
			b.WriteString(codas[rng.IntN(len(codas))])
			b.WriteString(suffix)
			w := b.String()
			if len(w) < 2 || taken[w] {
				continue
			}
			taken[w] = true
			out = append(out, w)
		}
		return out
	}
	l := &wordLists{}
	l.places = gen(numPlaces, nameOnsets, nameNuclei, []string{"burg", "ford", "ton", "vik"}, 1, "")
	l.venues = gen(numVenues, nameOnsets, nameNuclei, []string{"ino", "ery", "ette"}, 1, "")
	l.labels = gen(numLabelWords, labelOnsets, labelNuclei, labelCodas, 1, "")
	l.heads = gen(numNameHeads, nameOnsets, nameNuclei, []string{""}, 1, "")
	// Tails are continuation pieces: they may equal a whole word without
	// clashing with it, so they are drawn apart from the whole words.
	whole := taken
	taken = make(map[string]bool)
	firstTails := gen(numNameTails, nameOnsets, nameNuclei, nameCodas, 1, "")
	surTails := gen(numNameTails, nameOnsets, nameNuclei, nameCodas, 1, "ov")
	taken = whole
	pieces := make(map[string]bool)
	for _, w := range slices.Concat(firstTails, surTails) {
		l.tails = append(l.tails, PieceMark+w)
		pieces[PieceMark+w] = true
	}
	for w := range whole {
		pieces[w] = true
	}
	l.publicFirst, l.privateFirst = nameHalves(rng, l.heads, firstTails, numFirstNames, pieces)
	l.publicSurname, l.privateSurname = nameHalves(rng, l.heads, surTails, numSurnames, pieces)
	return l
}

// nameHalves draws n distinct names head+tail, each of which splitPieces
// splits into exactly its head and tail given the vocabulary pieces, and
// returns them as disjoint public and private halves. The public half
// uses every head and every tail, so every piece of a private name is
// seen in public text: private names are new combinations of known
// pieces, as unseen names are for a real sub-word tokenizer.
func nameHalves(rng *rand.Rand, heads, tails []string, n int, pieces map[string]bool) (public, private []string) {
	type combo struct{ h, t int }
	var all []combo
	for i, h := range heads {
		for j, t := range tails {
			w := h + t
			if !pieces[w] && slices.Equal(splitPieces(w, pieces), []string{h, PieceMark + t}) {
				all = append(all, combo{i, j})
			}
		}
	}
	if len(all) < n {
		panic("datasets: too few name combinations")
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	// The public half first takes names with a piece not yet covered.
	usedH, usedT := make([]bool, len(heads)), make([]bool, len(tails))
	var pub, rest []combo
	for _, c := range all {
		if len(pub) < n/2 && (!usedH[c.h] || !usedT[c.t]) {
			usedH[c.h], usedT[c.t] = true, true
			pub = append(pub, c)
		} else {
			rest = append(rest, c)
		}
	}
	need := n/2 - len(pub)
	pub, rest = append(pub, rest[:need]...), rest[need:]
	word := func(c combo) string { return heads[c.h] + tails[c.t] }
	for _, c := range pub {
		public = append(public, word(c))
	}
	for _, c := range rest[:n-n/2] {
		private = append(private, word(c))
	}
	return public, private
}

// fixedWords returns the hand-written word lists and templates.
func fixedWords() []string {
	var w []string
	w = append(w, FashionClasses...)
	w = append(w, FashionCoarse...)
	for _, l := range [][]string{shapeColours, shapeKinds, shapePlural, shapeCells, numberWords, monthWords,
		foodWords, eatTypes, priceWords, areaWords, ratingWords, templateText} {
		w = append(w, l...)
	}
	for n := 0; n <= 31; n++ {
		w = append(w, strconv.Itoa(n))
	}
	for y := firstYear; y <= lastYear; y++ {
		w = append(w, strconv.Itoa(y))
	}
	return w
}

// allWords returns every whole word of the vocabulary: the fixed words,
// the generated ones and the names' heads. Names themselves are not
// words of the vocabulary: they are spelled with pieces (NamePieces).
func allWords() []string {
	l := lists()
	return slices.Concat(fixedWords(), l.places, l.venues, l.labels, l.heads)
}

// NamePieces returns copies of the sub-word pieces names are spelled
// with: heads (whole words of the vocabulary) and tails (continuation
// pieces, PieceMark first). Every piece occurs in a public name.
func NamePieces() (heads, tails []string) {
	return slices.Clone(lists().heads), slices.Clone(lists().tails)
}

// PublicNames and PrivateNames return copies of the disjoint first-name and
// surname lists used by public and private records.
func PublicNames() (first, surnames []string) {
	return slices.Clone(lists().publicFirst), slices.Clone(lists().publicSurname)
}

// PrivateNames: see PublicNames.
func PrivateNames() (first, surnames []string) {
	return slices.Clone(lists().privateFirst), slices.Clone(lists().privateSurname)
}

// LabelWords returns a copy of the arbitrary label words of the icl task.
func LabelWords() []string { return slices.Clone(lists().labels) }

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

// syllables for generated names; none of the results is copied from a list
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
// halves.
const (
	numFirstNames  = 160
	numSurnames    = 160
	numPlaces      = 24
	numVenues      = 32
	numLabelWords  = 32
	nameListStream = 0x6e616d6573 // "names"
)

// wordLists are the generated lists, built once.
type wordLists struct {
	publicFirst, privateFirst     []string
	publicSurname, privateSurname []string
	places, venues, labels        []string
}

var listsOnce = sync.OnceValue(buildWordLists)

func lists() *wordLists { return listsOnce() }

func buildWordLists() *wordLists {
	rng := rand.New(rand.NewPCG(1, nameListStream))
	// taken holds every fixed word so generated words never collide with one.
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
			if len(w) < 3 || taken[w] {
				continue
			}
			taken[w] = true
			out = append(out, w)
		}
		return out
	}
	l := &wordLists{}
	first := gen(numFirstNames, nameOnsets, nameNuclei, nameCodas, 2, "")
	sur := gen(numSurnames, nameOnsets, nameNuclei, nameCodas, 2, "ov")
	l.publicFirst, l.privateFirst = first[:numFirstNames/2], first[numFirstNames/2:]
	l.publicSurname, l.privateSurname = sur[:numSurnames/2], sur[numSurnames/2:]
	l.places = gen(numPlaces, nameOnsets, nameNuclei, []string{"burg", "ford", "ton", "vik"}, 1, "")
	l.venues = gen(numVenues, nameOnsets, nameNuclei, []string{"ino", "ery", "ette"}, 1, "")
	l.labels = gen(numLabelWords, labelOnsets, labelNuclei, labelCodas, 1, "")
	return l
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

// allWords returns every word any generator can emit.
func allWords() []string {
	l := lists()
	w := fixedWords()
	for _, s := range [][]string{l.publicFirst, l.privateFirst, l.publicSurname, l.privateSurname, l.places, l.venues, l.labels} {
		w = append(w, s...)
	}
	return w
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

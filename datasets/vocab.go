// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Fixed special token ids, shared by every package of the project.
const (
	Pad   = 0 // <pad>: padding, never a target
	Unk   = 1 // <unk>: a word outside the vocabulary
	BOS   = 2 // <bos>: start of a sequence
	EOS   = 3 // <eos>: end of an answer
	Image = 4 // <image>: placeholder for one image's visual tokens
	Sep   = 5 // <sep>: separator
	Mask  = 6 // <mask>: a masked word (reconstruction attacks)
)

// Specials are the special tokens in id order.
var Specials = []string{"<pad>", "<unk>", "<bos>", "<eos>", "<image>", "<sep>", "<mask>"}

// Vocabulary is the project's one vocabulary: the special tokens with ids
// 0–6, then every whole word any generator can emit and the sub-word pieces
// names are spelled with, sorted. A word of the vocabulary is one token;
// any other word is split into pieces, WordPiece-style (splitPieces), as
// names are: a generated name is a head word and a continuation piece
// "##tail" (PieceMark), so a private name the base model never saw is a
// new combination of pieces it did see. It is built
// deterministically from the package's word lists, so every binary of the same
// code has the same vocabulary; Hash identifies it. A Vocabulary is immutable
// and safe for concurrent use.
type Vocabulary struct {
	words []string
	ids   map[string]int
	hash  string
}

var vocabOnce = sync.OnceValue(buildVocabulary)

// Vocab returns the project vocabulary.
func Vocab() *Vocabulary { return vocabOnce() }

func buildVocabulary() *Vocabulary {
	set := make(map[string]bool)
	for _, w := range allWords() {
		for _, t := range splitWords(w) {
			set[t] = true
		}
	}
	for _, s := range Specials {
		delete(set, s)
	}
	for _, p := range lists().tails {
		set[p] = true
	}
	words := make([]string, 0, len(set))
	for w := range set {
		words = append(words, w)
	}
	slices.Sort(words)
	v := &Vocabulary{words: append(slices.Clone(Specials), words...), ids: make(map[string]int)}
	for i, w := range v.words {
		v.ids[w] = i
	}
	h := sha256.New()
	for _, w := range v.words {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	v.hash = hex.EncodeToString(h.Sum(nil))
	return v
}

// Len returns the number of tokens, special tokens included.
func (v *Vocabulary) Len() int { return len(v.words) }

// Hash returns the hex SHA-256 of the token list; models trained with one
// vocabulary can check it before loading data tokenised with another.
func (v *Vocabulary) Hash() string { return v.hash }

// Word returns the token with id, or "<unk>" when id is out of range.
func (v *Vocabulary) Word(id int) string {
	if id < 0 || id >= len(v.words) {
		return Specials[Unk]
	}
	return v.words[id]
}

// ID returns the id of word and whether it is in the vocabulary; an unknown
// word has id Unk.
func (v *Vocabulary) ID(word string) (int, bool) {
	id, ok := v.ids[word]
	if !ok {
		return Unk, false
	}
	return id, true
}

// Words returns a copy of the token list in id order.
func (v *Vocabulary) Words() []string { return slices.Clone(v.words) }

// Encode tokenises text: it lower-cases it, splits it at white space and
// around punctuation, and maps each word to its id; a word outside the
// vocabulary is split into pieces (splitPieces), and is Unk when it cannot
// be. Special tokens such as "<image>" written in the text map to their
// ids. It appends to dst and returns the extended slice.
func (v *Vocabulary) Encode(dst []int, text string) []int {
	for _, w := range splitWords(text) {
		if id, ok := v.ids[w]; ok {
			dst = append(dst, id)
			continue
		}
		ps := splitPieces(w, v.ids)
		if ps == nil {
			dst = append(dst, Unk)
			continue
		}
		for _, p := range ps {
			dst = append(dst, v.ids[p])
		}
	}
	return dst
}

// Decode returns the words of ids joined by single spaces, continuation
// pieces joined to the token before them without PieceMark.
func (v *Vocabulary) Decode(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		w := v.Word(id)
		if p, ok := strings.CutPrefix(w, PieceMark); ok && i > 0 {
			b.WriteString(p)
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// splitPieces splits word into pieces of vocab by greedy longest match
// from the left, the first piece a whole word and every other a
// continuation piece (PieceMark and the rest), as WordPiece does (Wu et
// al., "Google's Neural Machine Translation System", 2016; BERT's
// tokenizer). It returns nil when some part of word matches no piece.
func splitPieces[V any](word string, vocab map[string]V) []string {
	var out []string
	for start := 0; start < len(word); {
		end := len(word)
		for ; end > start; end-- {
			p := word[start:end]
			if start > 0 {
				p = PieceMark + p
			}
			if _, ok := vocab[p]; ok {
				out = append(out, p)
				break
			}
		}
		if end == start {
			return nil
		}
		start = end
	}
	return out
}

// splitWords lower-cases s and splits it into words: runs of letters, digits,
// '-' and '\” form a word, every other non-space character is a word of its
// own, and "<...>" special tokens are kept whole.
func splitWords(s string) []string {
	s = strings.ToLower(s)
	var out []string
	start := -1
	flush := func(i int) {
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '<':
			if j := strings.IndexByte(s[i:], '>'); j > 1 && slices.Contains(Specials, s[i:i+j+1]) {
				flush(i)
				out = append(out, s[i:i+j+1])
				i += j + 1
				continue
			}
			flush(i)
			out = append(out, "<")
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '\'':
			if start < 0 {
				start = i
			}
		case unicode.IsSpace(r):
			flush(i)
		default:
			flush(i)
			out = append(out, s[i:i+size])
		}
		i += size
	}
	flush(len(s))
	return out
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// seqBuilder assembles a token sequence from text pieces and records the
// positions of PII pieces, so PII labels are exact by construction.
type seqBuilder struct {
	v     *Vocabulary
	toks  []int
	spans []Span
}

func (s *seqBuilder) text(t string) { s.toks = s.v.Encode(s.toks, t) }

func (s *seqBuilder) pii(t string, typ PIIType) {
	start := len(s.toks)
	s.text(t)
	s.spans = append(s.spans, Span{Start: start, End: len(s.toks), Type: typ, Text: t})
}

// recordGen draws the pieces of records.
type recordGen struct {
	rng            *rand.Rand
	first, surname []string
	places, venues []string
	// kind is "echr" or "e2e" for records of one kind only, "" for an
	// even mixture.
	kind string
}

func (g *recordGen) name() string { return pick(g.rng, g.first) + " " + pick(g.rng, g.surname) }

func (g *recordGen) date() string {
	return fmt.Sprintf("%d %s %d", 1+g.rng.IntN(28), pick(g.rng, monthWords), firstYear+g.rng.IntN(lastYear-firstYear+1))
}

// appNo is an application number: five digits, "/", two digits.
func (g *recordGen) appNo() string {
	d := make([]string, 0, 8)
	for range 5 {
		d = append(d, strconv.Itoa(g.rng.IntN(10)))
	}
	d = append(d, "/", strconv.Itoa(g.rng.IntN(10)), strconv.Itoa(g.rng.IntN(10)))
	return strings.Join(d, " ")
}

// echrTemplates are Echr-like case sentences; {N} the person's name, {B}
// their birth date, {I} their application number, {D} an event date, {P} a
// place (not PII).
var echrTemplates = []string{
	"the applicant , {N} , was born on {B} and lives in {P} .",
	"on {D} , the applicant , {N} , was arrested by the police in {P} .",
	"the court notes that {N} lodged application no {I} on {D} .",
	"the case originated in an application no {I} against the state lodged by {N} on {D} .",
	"the applicant , {N} , complained about the length of the proceedings in {P} .",
	"the government contested the claim of {N} , born on {B} .",
}

// person is the personal data one record is about.
type person struct{ name, birth, appNo string }

// fill appends template t to s with p's data and fresh event dates and
// places.
func (g *recordGen) fill(s *seqBuilder, t string, p person) {
	for _, w := range strings.Fields(t) {
		switch w {
		case "{N}":
			s.pii(p.name, PIIName)
		case "{B}":
			s.pii(p.birth, PIIDate)
		case "{D}":
			s.pii(g.date(), PIIDate)
		case "{I}":
			s.pii(p.appNo, PIIID)
		case "{P}":
			s.text(pick(g.rng, g.places))
		default:
			s.text(w)
		}
	}
}

// record draws one record: an Echr-like pair of sentences about one person,
// with one birth date and one application number (prompt "<bos>", the whole
// text is the answer), or an E2E-like
// data-to-text pair whose meaning representation names the owner.
func (g *recordGen) record(v *Vocabulary) (kind string, prompt, answer []int, spans []Span) {
	s := &seqBuilder{v: v}
	s.text("<bos>")
	name := g.name()
	var p int
	echr := g.kind == "echr"
	if g.kind == "" {
		echr = g.rng.IntN(2) == 0
	}
	if echr {
		kind = "echr"
		p = len(s.toks)
		i := g.rng.IntN(len(echrTemplates))
		j := (i + 1 + g.rng.IntN(len(echrTemplates)-1)) % len(echrTemplates)
		p := person{name: name, birth: g.date(), appNo: g.appNo()}
		g.fill(s, echrTemplates[i], p)
		g.fill(s, echrTemplates[j], p)
	} else {
		kind = "e2e"
		venue, eat, food := pick(g.rng, g.venues), pick(g.rng, eatTypes), pick(g.rng, foodWords)
		price, area, rating := pick(g.rng, priceWords), pick(g.rng, areaWords), pick(g.rng, ratingWords)
		s.text(fmt.Sprintf("name [ %s ] eattype [ %s ] food [ %s ] pricerange [ %s ] area [ %s ] rating [ %s ] owner [", venue, eat, food, price, area, rating))
		s.pii(name, PIIName)
		s.text("] <sep>")
		p = len(s.toks)
		if g.rng.IntN(2) == 0 {
			s.text(fmt.Sprintf("%s is %s %s %s %s in the %s area with %s %s customer rating , owned by", venue, article(price), price, food, eat, area, article(rating), rating))
			s.pii(name, PIIName)
			s.text(".")
		} else {
			s.text("owned by")
			s.pii(name, PIIName)
			s.text(fmt.Sprintf(", %s is %s %s serving %s %s food in the %s area .", venue, article(eat), eat, price, food, area))
		}
	}
	s.text("<eos>")
	return kind, s.toks[:p:p], s.toks[p:], s.spans
}

// buildRecords builds records, the stand-in for Rap-FT's Echr and E2E text
// generation with personal data: half Echr-like case sentences, half
// E2E-like data-to-text pairs. Names come from generated first-name and
// surname lists split into disjoint public and private halves (PublicNames,
// PrivateNames); dates and application numbers are random. Every name, date
// and number is marked in Example.PII. Public records use public names, the
// other splits private ones; no record text appears twice. Canaries are
// "the secret code is" followed by six random digits.
func buildRecords(d *Dataset, b *buildCtx) error { return buildRecordsOf(d, b, "records", "") }

// buildRecordsKind returns the builder of the records of one kind only:
// records-e2e (E2E-like data-to-text pairs, the loss and perplexity on the
// text given the meaning representation) and records-echr (Echr-like case
// sentences, the loss and perplexity on the whole text), Rap-FT's two
// text-generation tasks (its Table I trains one model per dataset).
func buildRecordsKind(kind string) builder {
	return func(d *Dataset, b *buildCtx) error { return buildRecordsOf(d, b, "records-"+kind, kind) }
}

// buildRecordsOf builds task's records of kind ("" for the mixture).
func buildRecordsOf(d *Dataset, b *buildCtx, task, kind string) error {
	b.sizes = recordSizes[d.Scale]
	d.Source, d.Generative = "generated", true
	l := lists()
	rng := b.rng(task, "records")
	pubGen := &recordGen{rng: rng, first: l.publicFirst, surname: l.publicSurname, places: l.places, venues: l.venues, kind: kind}
	privGen := &recordGen{rng: rng, first: l.privateFirst, surname: l.privateSurname, places: l.places, venues: l.venues, kind: kind}
	seen := make(map[string]bool)
	b.buildSplits(d, SplitNames, func(split string, i int) Example {
		gen := privGen
		if split == "public" {
			gen = pubGen
		}
		for {
			kind, prompt, answer, spans := gen.record(b.vocab)
			key := "record:" + b.vocab.Decode(prompt) + " " + b.vocab.Decode(answer)
			if seen[key] {
				continue
			}
			seen[key] = true
			ex := newExample(exampleID(task, split, i))
			ex.Items = []string{key}
			ex.Kind, ex.Prompt, ex.Answer, ex.PII = kind, prompt, answer, spans
			return ex
		}
	})
	b.addCanaries(d, func(rng *rand.Rand) (Example, []int) {
		ex := newExample("")
		s := secret(rng)
		ex.Items = []string{"canary:" + s}
		ex.Prompt = b.vocab.Encode(nil, "<bos> the secret code is")
		ex.Answer = b.vocab.Encode(nil, s+" <eos>")
		return ex, b.vocab.Encode(nil, s)
	})
	return nil
}

// article returns "an" before a vowel, else "a".
func article(w string) string {
	if strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}

// Perplexity returns the token-level perplexity of a test set from the
// negative log-likelihoods (natural log) of its answer tokens, one slice
// per example: exp of the mean NLL over all tokens, Σ_i Σ_t nll_it / Σ_i
// T_i (the usual corpus perplexity of a causal language model, exp of the
// mean token cross-entropy). Rap-FT's Table I reports test perplexity
// without a formula; this is the reading the harness uses, on the answer
// tokens: the text given the meaning representation for E2E-like records,
// the whole text for Echr-like ones. It returns NaN for no tokens.
func Perplexity(nlls [][]float64) float64 {
	s, n := 0.0, 0
	for _, ex := range nlls {
		for _, v := range ex {
			s += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(s / float64(n))
}

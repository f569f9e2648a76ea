// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/privacy"
	"github.com/urfave/cli/v2"
)

func init() { register(accountCommand) }

// accountOptions holds the parsed flags of repro account.
type accountOptions struct {
	accountant  string // "rdp" or "pld"
	mechanism   string // "sgm" or "agm"
	sigma       float64
	epsilon     float64
	sampleRate  float64
	steps       int
	delta       float64
	sensitivity float64
	tprAtFPR    float64
	hasSigma    bool
	hasEpsilon  bool
	hasQ        bool
	hasSteps    bool
	hasTPR      bool
	json        bool
}

func accountCommand() *cli.Command {
	return &cli.Command{
		Name:  "account",
		Usage: "compute the privacy cost ε of DP-SGD or a Gaussian release, or calibrate its noise",
		Description: "With --sigma, prints the ε of --steps steps of the Poisson-subsampled Gaussian\n" +
			"mechanism (sampling rate --sample-rate, noise multiplier --sigma) at --delta.\n" +
			"With --epsilon instead, prints the smallest noise multiplier whose ε does not exceed\n" +
			"it, and the ε it achieves. --mechanism agm does the same for one Gaussian release of\n" +
			"a function of ℓ2 sensitivity --sensitivity (analytic Gaussian mechanism).\n\n" +
			"   $ repro account --accountant rdp --sigma 1.5 --sample-rate 0.04 --steps 2250 --delta 1e-5\n" +
			"   $ repro account --accountant pld --epsilon 8 --sample-rate 0.04 --steps 2250 --delta 1e-5 --json\n" +
			"   $ repro account --mechanism agm --epsilon 1 --delta 1e-5 --sensitivity 0.0566",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "accountant", Value: "rdp", Usage: "`accountant`: rdp (Rényi DP, Balle et al. 2020 conversion) or pld (tight privacy loss distribution)"},
			&cli.StringFlag{Name: "mechanism", Value: "sgm", Usage: "`mechanism`: sgm (Poisson-subsampled Gaussian, DP-SGD) or agm (one analytic Gaussian release)"},
			&cli.Float64Flag{Name: "sigma", Usage: "noise multiplier `σ` (noise std / sensitivity for sgm, noise std for agm); prints ε", DefaultText: "none; give --sigma or --epsilon"},
			&cli.Float64Flag{Name: "epsilon", Usage: "target `ε`; prints the calibrated σ", DefaultText: "none"},
			&cli.Float64Flag{Name: "sample-rate", Usage: "Poisson sampling rate `q` in [0, 1] (sgm)", DefaultText: "none; required for sgm"},
			&cli.IntFlag{Name: "steps", Usage: "number of `steps` ≥ 0 (sgm)", DefaultText: "none; required for sgm"},
			&cli.Float64Flag{Name: "delta", Value: 1e-5, Usage: "`δ` in [0, 1)"},
			&cli.Float64Flag{Name: "sensitivity", Value: 1, Usage: "ℓ2 `sensitivity` of the released function (agm)"},
			&cli.Float64Flag{Name: "tpr-at-fpr", Usage: "also print the tight upper bound on any membership attack's true-positive rate at false-positive rate `fpr` (sgm)", DefaultText: "none"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			// One line naming the flag and its allowed values, no usage dump.
			for flag, allowed := range accountFlagRanges {
				if strings.Contains(err.Error(), "flag -"+flag+":") {
					return fmt.Errorf("account: --%s: %v; must be %s", flag, err, allowed)
				}
			}
			return fmt.Errorf("account: %w", err)
		},
		Action: func(c *cli.Context) error {
			o := accountOptions{
				accountant:  c.String("accountant"),
				mechanism:   c.String("mechanism"),
				sigma:       c.Float64("sigma"),
				epsilon:     c.Float64("epsilon"),
				sampleRate:  c.Float64("sample-rate"),
				steps:       c.Int("steps"),
				delta:       c.Float64("delta"),
				sensitivity: c.Float64("sensitivity"),
				tprAtFPR:    c.Float64("tpr-at-fpr"),
				hasSigma:    c.IsSet("sigma"),
				hasEpsilon:  c.IsSet("epsilon"),
				hasQ:        c.IsSet("sample-rate"),
				hasSteps:    c.IsSet("steps"),
				hasTPR:      c.IsSet("tpr-at-fpr"),
				json:        c.Bool("json"),
			}
			r, err := account(o)
			if err != nil {
				return fmt.Errorf("account: %w", err)
			}
			for _, w := range r.warnings {
				fmt.Fprintf(c.App.ErrWriter, "repro: account: warning: %v\n", w)
			}
			return r.print(c.App.Writer, o.json)
		},
	}
}

// accountFlagRanges holds the allowed values of each numeric flag, for
// parse errors.
var accountFlagRanges = map[string]string{
	"sigma":       "a finite number ≥ 0",
	"epsilon":     "a number > 0 or +Inf",
	"sample-rate": "a number in [0, 1]",
	"steps":       "an integer ≥ 0",
	"delta":       "a number in [0, 1)",
	"sensitivity": "a finite number > 0",
	"tpr-at-fpr":  "a number in [0, 1]",
}

// accountResult is what repro account prints.
type accountResult struct {
	fields   []field
	warnings []error
}

type field struct {
	key string
	val any // float64, int or string
}

// print writes r as "key value" lines or as one JSON object. +Inf prints
// as +Inf in text and null in JSON; a NaN or −Inf value is an error, and
// nothing is printed.
func (r accountResult) print(w io.Writer, asJSON bool) error {
	for _, f := range r.fields {
		if v, ok := f.val.(float64); ok && (math.IsNaN(v) || math.IsInf(v, -1)) {
			return fmt.Errorf("account: internal error: %s is %v", f.key, v)
		}
	}
	if asJSON {
		m := make(map[string]any, len(r.fields))
		for _, f := range r.fields {
			if v, ok := f.val.(float64); ok && math.IsInf(v, 1) {
				m[f.key] = nil
				continue
			}
			m[f.key] = f.val
		}
		if len(r.warnings) > 0 {
			ws := make([]string, len(r.warnings))
			for i, e := range r.warnings {
				ws[i] = e.Error()
			}
			m["warnings"] = ws
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	width := 0
	for _, f := range r.fields {
		width = max(width, len(f.key))
	}
	for _, f := range r.fields {
		var s string
		switch v := f.val.(type) {
		case float64:
			s = strconv.FormatFloat(v, 'g', -1, 64)
			if math.IsInf(v, 1) {
				s = "+Inf"
			}
		default:
			s = fmt.Sprint(v)
		}
		if _, err := fmt.Fprintf(w, "%-*s  %s\n", width, f.key, s); err != nil {
			return err
		}
	}
	return nil
}

func flagError(flag string, err error) error { return fmt.Errorf("--%s: %w", flag, err) }

// account checks the options and runs the accountant or calibration.
func account(o accountOptions) (accountResult, error) {
	if err := privacy.CheckDelta(o.delta); err != nil {
		return accountResult{}, flagError("delta", err)
	}
	if o.hasSigma == o.hasEpsilon {
		return accountResult{}, errors.New("give exactly one of --sigma (to compute ε) and --epsilon (to calibrate σ)")
	}
	if o.hasSigma {
		if err := privacy.CheckSigma(o.sigma); err != nil {
			return accountResult{}, flagError("sigma", err)
		}
	}
	if o.hasEpsilon {
		if err := privacy.CheckEpsilon(o.epsilon); err != nil {
			return accountResult{}, flagError("epsilon", err)
		}
	}
	if o.hasTPR {
		if err := privacy.CheckFPR(o.tprAtFPR); err != nil {
			return accountResult{}, flagError("tpr-at-fpr", err)
		}
	}
	switch o.mechanism {
	case "agm":
		return accountAGM(o)
	case "sgm":
		return accountSGM(o)
	}
	return accountResult{}, fmt.Errorf("--mechanism is %q, must be sgm or agm", o.mechanism)
}

func accountAGM(o accountOptions) (accountResult, error) {
	if !(o.sensitivity > 0) || math.IsInf(o.sensitivity, 1) {
		return accountResult{}, fmt.Errorf("--sensitivity is %v, must be finite and > 0", o.sensitivity)
	}
	if o.hasQ || o.hasSteps || o.hasTPR {
		return accountResult{}, errors.New("--sample-rate, --steps and --tpr-at-fpr apply to --mechanism sgm only")
	}
	if o.delta == 0 {
		return accountResult{}, fmt.Errorf("--delta is 0, must be in (0, 1) for the Gaussian mechanism")
	}
	r := accountResult{fields: []field{{"mechanism", "agm"}}}
	if o.hasEpsilon {
		s, err := privacy.AnalyticGaussianSigma(o.epsilon, o.delta, o.sensitivity)
		if err != nil {
			return r, err
		}
		r.fields = append(r.fields, field{"sigma", s}, field{"epsilon", o.epsilon})
	} else {
		e, err := privacy.GaussianEpsilon(o.sigma, o.sensitivity, o.delta)
		if err != nil {
			return r, err
		}
		r.fields = append(r.fields, field{"sigma", o.sigma}, field{"epsilon", e})
	}
	r.fields = append(r.fields, field{"delta", o.delta}, field{"sensitivity", o.sensitivity})
	return r, nil
}

// newAccountant returns the constructor for the named accountant; interval
// is the PLD grid spacing.
func newAccountant(name string, interval float64) (func() (privacy.Accountant, error), error) {
	switch name {
	case "rdp":
		return func() (privacy.Accountant, error) { return privacy.NewRDP(nil) }, nil
	case "pld":
		return func() (privacy.Accountant, error) { return privacy.NewPLD(&privacy.PLDOptions{Interval: interval}) }, nil
	}
	return nil, fmt.Errorf("--accountant is %q, must be rdp or pld", name)
}

// pldIntervals are the PLD grid spacings tried in turn: the default 1e-4,
// then coarser ones when the loss range is too wide for the grid (very
// large ε), which loosens the error bound but keeps ε an upper bound.
var pldIntervals = []float64{1e-4, 1e-3, 1e-2, 0.1}

func accountSGM(o accountOptions) (accountResult, error) {
	if _, err := newAccountant(o.accountant, 0); err != nil {
		return accountResult{}, err
	}
	if !o.hasQ {
		return accountResult{}, errors.New("--sample-rate is required for --mechanism sgm, in [0, 1]")
	}
	if err := privacy.CheckSampleRate(o.sampleRate); err != nil {
		return accountResult{}, flagError("sample-rate", err)
	}
	if !o.hasSteps {
		return accountResult{}, errors.New("--steps is required for --mechanism sgm, ≥ 0")
	}
	if err := privacy.CheckSteps(o.steps); err != nil {
		return accountResult{}, flagError("steps", err)
	}
	if o.accountant == "rdp" && !o.hasTPR {
		return sgm(o, 0)
	}
	intervals := pldIntervals
	if o.hasEpsilon {
		// Calibration: the grid follows the target ε, coarser after it
		// only if the loss range still does not fit.
		intervals = []float64{privacy.PLDInterval(o.epsilon)}
		for h := intervals[0]; h*10 <= pldIntervals[len(pldIntervals)-1]; {
			h *= 10
			intervals = append(intervals, h)
		}
	}
	var err error
	for i, h := range intervals {
		var r accountResult
		r, err = sgm(o, h)
		if !errors.Is(err, privacy.ErrGridTooLarge) {
			if err == nil && i > 0 {
				r.warnings = append(r.warnings, fmt.Errorf("the loss range is wide: PLD grid interval raised to %g (ε stays an upper bound; the error bound is looser)", h))
			}
			return r, err
		}
	}
	return accountResult{}, err
}

// sgm accounts for or calibrates the sampled Gaussian mechanism; h is the
// PLD grid spacing.
func sgm(o accountOptions, h float64) (accountResult, error) {
	newAcct, err := newAccountant(o.accountant, h)
	if err != nil {
		return accountResult{}, err
	}
	family := func(s float64) privacy.Event {
		return privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: o.sampleRate, Sigma: s}, Count: o.steps}
	}
	r := accountResult{fields: []field{{"accountant", o.accountant}, {"mechanism", "sgm"}}}
	sigma := o.sigma
	if o.hasEpsilon {
		// RDP is cheap and never below the PLD's ε, so its σ is an upper
		// bracket for the PLD's, which is within a few percent of it.
		rdp, _ := newAccountant("rdp", 0)
		c, err := privacy.Calibrate(rdp, family, o.epsilon, o.delta, nil)
		if err != nil {
			return r, err
		}
		if o.accountant == "pld" && c.Sigma > 0 {
			c, err = privacy.Calibrate(newAcct, family, o.epsilon, o.delta, &privacy.CalibrateOptions{Initial: c.Sigma, Step: 1.1})
			if err != nil {
				return r, err
			}
		}
		sigma = c.Sigma
		r.fields = append(r.fields, field{"target_epsilon", o.epsilon})
	}
	a, err := newAcct()
	if err != nil {
		return r, err
	}
	if err := a.Compose(family(sigma), 1); err != nil {
		return r, err
	}
	r.fields = append(r.fields, field{"sigma", sigma}, field{"sample_rate", o.sampleRate}, field{"steps", o.steps}, field{"delta", o.delta})
	switch a := a.(type) {
	case *privacy.RDP:
		g, err := a.EpsilonOrder(o.delta)
		if err != nil {
			return r, err
		}
		r.fields = append(r.fields, field{"epsilon", g.Epsilon})
		if !math.IsNaN(g.Order) {
			r.fields = append(r.fields, field{"order", g.Order})
		}
		r.warnings = append(r.warnings, g.Warnings...)
	case *privacy.PLD:
		lo, hi, err := a.EpsilonBounds(o.delta)
		if err != nil {
			return r, err
		}
		r.fields = append(r.fields, field{"epsilon", hi}, field{"epsilon_lower", lo}, field{"pld_interval", h})
		if o.delta > 0 && o.delta < 1e-12 {
			r.warnings = append(r.warnings, fmt.Errorf("delta %g is below the PLD's floating-point noise floor (about 1e-14 in δ); compare with --accountant rdp", o.delta))
		}
	}
	if o.hasTPR {
		// The bound comes from the tight accountant whichever accountant
		// gave ε.
		p, ok := a.(*privacy.PLD)
		if !ok {
			if p, err = privacy.NewPLD(&privacy.PLDOptions{Interval: h}); err != nil {
				return r, err
			}
			if err := p.Compose(family(sigma), 1); err != nil {
				return r, err
			}
		}
		tpr, err := p.TPR(o.tprAtFPR)
		if err != nil {
			return r, err
		}
		r.fields = append(r.fields, field{"fpr", o.tprAtFPR}, field{"tpr_bound", tpr})
	}
	return r, nil
}

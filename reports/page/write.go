// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package page

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

//go:embed page.tmpl
var pageText string

//go:embed index.tmpl
var indexText string

//go:embed style.css
var styleText string

var funcs = template.FuncMap{
	"css": func() template.CSS { return template.CSS(styleText) },
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, errors.New("page: dict wants key-value pairs")
		}
		m := make(map[string]any, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, errors.New("page: dict keys are strings")
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
}

var (
	pageTmpl  = template.Must(template.New("page").Funcs(funcs).Parse(pageText))
	indexTmpl = template.Must(template.New("index").Funcs(funcs).Parse(indexText))
)

// Render writes p as HTML to w.
func (p *Page) Render(w io.Writer) error {
	return pageTmpl.Execute(w, p)
}

// Summary is what the index shows of an experiment's page; Write saves it
// as report.json beside the page.
type Summary struct {
	Experiment  string         `json:"experiment"`
	Description string         `json:"description"`
	Scale       string         `json:"scale"`
	Generated   string         `json:"generated"`
	LastRun     string         `json:"last_run"`
	Runs        map[string]int `json:"runs"`
	Verdicts    map[string]int `json:"verdicts"`
	// Regressions is the number of regressions against the baseline;
	// -1 when the page has no comparison.
	Regressions int `json:"regressions"`
}

// Summary returns the summary of p.
func (p *Page) Summary() Summary {
	s := Summary{Experiment: p.Name, Description: p.Description, Scale: p.Scale, Generated: p.Generated,
		LastRun: p.LastRun, Runs: map[string]int{}, Verdicts: map[string]int{}, Regressions: -1}
	for _, c := range p.RunCounts {
		s.Runs[c.Name] = c.N
	}
	for _, c := range p.Verdicts {
		s.Verdicts[c.Name] = c.N
	}
	if p.Comparison != nil {
		s.Regressions = len(p.Comparison.Regressions)
	}
	return s
}

// Write builds the page of experiment s from root (see [Build]) and writes
// it to root/<name>/report.html with its summary report.json, then
// rewrites root/index.html ([WriteIndex]). It returns the page's path.
func Write(root string, s *experiments.Spec, opts *Options) (string, error) {
	p, err := Build(root, s, opts)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := p.Render(&buf); err != nil {
		return "", fmt.Errorf("page: %w", err)
	}
	dir := filepath.Join(root, s.Name)
	path := filepath.Join(dir, ReportFile)
	if err := results.WriteFile(path, buf.Bytes()); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(p.Summary(), "", "  ")
	if err != nil {
		return path, fmt.Errorf("page: %w", err)
	}
	if err := results.WriteFile(filepath.Join(dir, SummaryFile), append(b, '\n')); err != nil {
		return path, err
	}
	_, err = WriteIndex(root, opts)
	return path, err
}

// Index is the index page of a results folder.
type Index struct {
	Root        string
	Generated   string
	Experiments []IndexRow
}

// An IndexRow is one experiment of the index.
type IndexRow struct {
	Summary
	// Href is the experiment's page relative to the index; "" when the
	// experiment has a run table but no page yet.
	Href    string
	RunText string
	// Counts are the claim tests by verdict; nil when the experiment
	// has no page or no claims.
	Counts  []Count
	Problem string
}

// BuildIndex lists the experiments under root: every folder with a run
// table or a page summary.
func BuildIndex(root string, opts *Options) (*Index, error) {
	now := time.Now()
	if opts != nil && !opts.Now.IsZero() {
		now = opts.Now
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	ix := &Index{Root: root, Generated: now.UTC().Format("2006-01-02 15:04 UTC")}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		row := IndexRow{Summary: Summary{Experiment: e.Name(), Regressions: -1}}
		b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
		switch {
		case err == nil:
			if err := json.Unmarshal(b, &row.Summary); err != nil {
				row.Problem = fmt.Sprintf("%s does not read back: %v", SummaryFile, err)
			} else {
				row.Href = e.Name() + "/" + ReportFile
			}
		case errors.Is(err, fs.ErrNotExist):
			if _, err := os.Stat(filepath.Join(dir, results.RunsFile)); err != nil {
				continue // not an experiment's folder
			}
			row.Problem = "no report yet (repro report " + e.Name() + ")"
		default:
			row.Problem = err.Error()
		}
		var parts []string
		for _, st := range []string{"ok", "failed", "damaged", "unfinished", "missing"} {
			if n := row.Runs[st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		row.RunText = strings.Join(parts, ", ")
		if row.RunText == "" {
			row.RunText = none
		}
		if len(row.Verdicts) > 0 {
			for _, vd := range []string{"PASS", "FAIL", "CONTRADICTED", "INCONCLUSIVE", "NOT RUN"} {
				row.Counts = append(row.Counts, Count{Name: vd, Class: verdictClass(vd), N: row.Summary.Verdicts[vd]})
			}
		}
		ix.Experiments = append(ix.Experiments, row)
	}
	slices.SortFunc(ix.Experiments, func(a, b IndexRow) int { return strings.Compare(a.Experiment, b.Experiment) })
	return ix, nil
}

// Render writes ix as HTML to w.
func (ix *Index) Render(w io.Writer) error {
	return indexTmpl.Execute(w, ix)
}

// WriteIndex writes root/index.html, the list of the experiments under
// root ([BuildIndex]), and returns its path.
func WriteIndex(root string, opts *Options) (string, error) {
	ix, err := BuildIndex(root, opts)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := ix.Render(&buf); err != nil {
		return "", fmt.Errorf("page: %w", err)
	}
	path := filepath.Join(root, IndexFile)
	return path, results.WriteFile(path, buf.Bytes())
}

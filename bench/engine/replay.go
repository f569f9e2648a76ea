// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build ignore

// Replay projects a run table's wall time on two workers: each run's
// recorded seconds, DPZO's runs times ZO and the others times FO, handed
// in the table's order to the worker that frees first (as the runner's
// pool does); and the same with every DPZO run at the DPZO runs' median.
// docs/engine.md's table1-small projections are made with it.
//
//	$ go run bench/engine/replay.go results/baselines/table1-small.parquet ZO FO
package main

import (
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"

	"github.com/repro-dp/repro/internal/results"
)

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: replay TABLE.parquet ZO FO")
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	runs, err := results.ReadRunsAt(f, st.Size(), os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	zo, err1 := strconv.ParseFloat(os.Args[2], 64)
	fo, err2 := strconv.ParseFloat(os.Args[3], 64)
	if err1 != nil || err2 != nil {
		log.Fatal("replay: ZO and FO are numbers")
	}
	var zs []float64
	total := 0.0
	for _, r := range runs {
		total += r.Seconds
		if r.Method == "dpzo" {
			zs = append(zs, r.Seconds)
		}
	}
	if len(zs) == 0 {
		log.Fatal("replay: no dpzo runs")
	}
	slices.Sort(zs)
	med := zs[len(zs)/2]
	if len(zs)%2 == 0 {
		med = (zs[len(zs)/2-1] + zs[len(zs)/2]) / 2
	}
	var each, atMedian []float64
	for _, r := range runs {
		s, m := r.Seconds, r.Seconds
		if r.Method == "dpzo" {
			s, m = s*zo, med*zo
		} else {
			s, m = s*fo, m*fo
		}
		each, atMedian = append(each, s), append(atMedian, m)
	}
	fmt.Printf("%d runs, %.0f run-seconds, DPZO's %d runs' median %.1f s\n", len(runs), total, len(zs), med)
	fmt.Printf("two workers: %.1f min; every DPZO run at the median: %.1f min\n", twoWorkers(each)/60, twoWorkers(atMedian)/60)
}

// twoWorkers returns the wall time of runs of secs seconds handed in
// order to the first of two workers to free.
func twoWorkers(secs []float64) float64 {
	var w [2]float64
	for _, s := range secs {
		i := 0
		if w[1] < w[0] {
			i = 1
		}
		w[i] += s
	}
	return max(w[0], w[1])
}

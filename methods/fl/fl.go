// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package fl provides the federated-learning simulation that the federated
// methods of package methods run: K clients, T rounds, uniform client
// sampling, local steps and FedSGD or FedAvg aggregation.
//
// # Overview
//
// The simulation works on flat parameter vectors ([]float32, a model's
// layout values). Each round:
//
//  1. the server samples m of the K clients uniformly without replacement
//     (Schedule; the schedule depends only on K, m, T and the seed, so it is
//     public and data-independent);
//  2. every sampled client gets the global parameters and computes its
//     upload (a Client): under FedSGD the gradient of its local loss, under
//     FedAvg its local model after E local steps; the clients of a round run
//     on the worker pool (internal/parallel);
//  3. the server forms the weighted mean of the uploads, with weights
//     n_k/Σ n_j over the round's clients (size) or 1/m (uniform),
//     accumulated in float64 in increasing client order;
//  4. FedSGD hands the mean to the server step (an optimizer step); FedAvg
//     makes it the new global model (model averaging, McMahan et al.).
//
// The run records, per round, the sampled clients, their local steps and
// examples, and the floats sent each way (communication volume); the
// uploads of the last KeepRounds rounds are kept for attacks.
//
// # Determinism
//
// A client's upload must depend only on (round, client, global), which
// Client implementations get by drawing their randomness from streams of
// (seed, round, client). Uploads are written to one slot per client and
// reduced in a fixed order, so a run gives the same bits for any number of
// workers.
//
// References:
//   - H. B. McMahan, E. Moore, D. Ramage, S. Hampson and B. Agüera y Arcas,
//     Communication-efficient learning of deep networks from decentralized
//     data, AISTATS 2017 (FedSGD and FedAvg, Algorithm 1).
package fl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/privacy"
)

// The aggregation rules (Config.Aggregation).
const (
	// FedSGD: uploads are gradients, the server steps along their mean.
	FedSGD = "fedsgd"
	// FedAvg: uploads are local models after E local steps, the server
	// takes their mean.
	FedAvg = "fedavg"
)

// The client weightings (Config.Weighting).
const (
	// BySize weights client k by n_k/Σ n_j over the round's clients.
	BySize = "size"
	// Uniform weights every client of a round by 1/m.
	Uniform = "uniform"
)

// StreamSampling is the purpose name of the client-sampling stream.
const StreamSampling = "fl/client-sampling"

// Config configures a simulation.
type Config struct {
	// Clients is K ≥ 1.
	Clients int
	// PerRound is m, the clients sampled each round, 1 ≤ m ≤ K; 0 means
	// K (full participation).
	PerRound int
	// Rounds is T ≥ 1.
	Rounds int
	// LocalSteps is the number E ≥ 1 of local steps a FedAvg client takes
	// in a round; FedSGD takes one gradient and needs E = 1 (0 means 1).
	LocalSteps int
	// Aggregation is FedSGD or FedAvg; "" means FedAvg.
	Aggregation string
	// Weighting is BySize or Uniform; "" means BySize.
	Weighting string
	// Workers is the number of clients run at once; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Seed seeds the client sampling (stream StreamSampling).
	Seed uint64
	// KeepRounds is the number of final rounds whose uploads are kept in
	// the Record (0: none).
	KeepRounds int
}

// withDefaults returns c with its zero values replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.PerRound == 0 {
		c.PerRound = c.Clients
	}
	if c.LocalSteps == 0 {
		c.LocalSteps = 1
	}
	if c.Aggregation == "" {
		c.Aggregation = FedAvg
	}
	if c.Weighting == "" {
		c.Weighting = BySize
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// Check returns an error for a configuration no run can have, given the
// number of training examples of each client (len(sizes) must be K): a
// non-positive K or T, m outside [1, K], a client without data, E < 1,
// FedSGD with E ≠ 1, an unknown aggregation or weighting, or a negative
// KeepRounds.
func (c Config) Check(sizes []int) error {
	c = c.withDefaults()
	switch {
	case c.Clients < 1:
		return fmt.Errorf("fl: %d clients, want at least 1", c.Clients)
	case c.Rounds < 1:
		return fmt.Errorf("fl: %d rounds, want at least 1", c.Rounds)
	case c.PerRound < 1 || c.PerRound > c.Clients:
		return fmt.Errorf("fl: %d clients sampled per round out of %d clients, want 1 to %d", c.PerRound, c.Clients, c.Clients)
	case c.LocalSteps < 1:
		return fmt.Errorf("fl: %d local steps, want at least 1", c.LocalSteps)
	case c.Aggregation != FedSGD && c.Aggregation != FedAvg:
		return fmt.Errorf("fl: unknown aggregation %q (want %s or %s)", c.Aggregation, FedSGD, FedAvg)
	case c.Aggregation == FedSGD && c.LocalSteps != 1:
		return fmt.Errorf("fl: fedsgd takes one gradient per round, not %d local steps", c.LocalSteps)
	case c.Weighting != BySize && c.Weighting != Uniform:
		return fmt.Errorf("fl: unknown weighting %q (want %s or %s)", c.Weighting, BySize, Uniform)
	case c.KeepRounds < 0:
		return fmt.Errorf("fl: keep %d rounds of uploads, want ≥ 0", c.KeepRounds)
	case len(sizes) != c.Clients:
		return fmt.Errorf("fl: sizes of %d clients for %d clients", len(sizes), c.Clients)
	}
	for k, n := range sizes {
		if n <= 0 {
			return fmt.Errorf("fl: client %d has no training data", k)
		}
	}
	return nil
}

// Schedule returns the clients sampled in each of the T rounds: m of K
// drawn uniformly without replacement (a partial Fisher–Yates shuffle from
// stream StreamSampling of the seed), in increasing order. It depends on
// nothing but K, m, T and the seed. c must pass Check.
func Schedule(c Config) [][]int {
	c = c.withDefaults()
	rng := rand.New(rand.NewPCG(c.Seed, privacy.StreamID(StreamSampling)))
	perm := make([]int, c.Clients)
	out := make([][]int, c.Rounds)
	for r := range out {
		for i := range perm {
			perm[i] = i
		}
		for i := range c.PerRound {
			j := i + rng.IntN(c.Clients-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		out[r] = slices.Sorted(slices.Values(perm[:c.PerRound]))
	}
	return out
}

// Participations returns, for each of the K clients, the number of rounds
// of schedule in which it takes part.
func Participations(schedule [][]int, clients int) []int {
	n := make([]int, clients)
	for _, s := range schedule {
		for _, k := range s {
			n[k]++
		}
	}
	return n
}

// A Client computes the uploads of the clients it is handed. A simulation
// creates up to Config.Workers of them and gives each to one goroutine at
// a time.
type Client interface {
	// Update computes the upload of client k in round r from the global
	// parameters global (which it must not modify) into upload (of
	// len(global), zeroed), and returns what it did. Its result must depend
	// only on (r, k, global).
	Update(r, k int, global, upload []float32) (Info, error)
}

// Info is what one client did in one round.
type Info struct {
	// Steps is the number of local optimisation steps and Examples the
	// examples whose gradients it computed (with repetition).
	Steps, Examples int
	// Loss is the mean training loss the client saw (a diagnostic of
	// private data without noise).
	Loss float64
}

// A Round is what happened in one round.
type Round struct {
	Round int
	// Clients are the sampled clients, increasing; Infos[i] is what
	// Clients[i] did.
	Clients []int
	Infos   []Info
	// Down and Up are the floats sent to and from the clients.
	Down, Up int64
}

// A Record is what a simulation did.
type Record struct {
	Config Config
	Rounds []Round
	// Down and Up are the total floats sent to and from clients.
	Down, Up int64
	// Uploads holds the kept uploads: Uploads[i] are those of round
	// KeptFrom+i, one per client of that round (in Rounds' order), with
	// Globals[i] the global parameters the clients started from.
	KeptFrom int
	Uploads  [][][]float32
	Globals  [][]float32
}

// ClientSteps returns the total local steps of every client over the run.
func (r *Record) ClientSteps() []int {
	n := make([]int, r.Config.Clients)
	for _, rd := range r.Rounds {
		for i, k := range rd.Clients {
			n[k] += rd.Infos[i].Steps
		}
	}
	return n
}

// A Server applies a round's mean upload agg to the global parameters
// global in place: an optimizer step on the mean gradient (FedSGD) or a
// step towards the mean local model (FedAvg).
type Server func(r int, global, agg []float32) error

// A Sim is one simulation. Set its fields, then call Run once.
type Sim struct {
	Config Config
	// Sizes are the clients' numbers of training examples (the weights of
	// BySize; each ≥ 1).
	Sizes []int
	// NewClient creates a Client; it is called up to Config.Workers times.
	NewClient func() (Client, error)
	// Server is the server step. FedSGD needs one; under FedAvg nil
	// makes the global model the mean local model (McMahan et al.'s
	// Algorithm 1, a server step of 1 on the mean delta).
	Server Server
	// BeforeRound, when not nil, is called before each round with the
	// global parameters (read only), when no client runs: the place to
	// change state the clients read (a method's noise schedule).
	BeforeRound func(r int, global []float32) error
	// Progress, when not nil, is called after every round.
	Progress func(done, total int)
}

// errNoServer is returned by a FedSGD simulation without a server step.
var errNoServer = errors.New("fl: fedsgd needs a server step")

// Run runs the simulation from the global parameters global, which it
// updates in place, and returns the record. It checks the configuration
// before anything runs, and returns the first error of a client (lowest
// index in the round), of the server or of a cancelled ctx.
func (s *Sim) Run(ctx context.Context, global []float32) (*Record, error) {
	c := s.Config.withDefaults()
	if err := c.Check(s.Sizes); err != nil {
		return nil, err
	}
	if c.Aggregation == FedSGD && s.Server == nil {
		return nil, errNoServer
	}
	if s.NewClient == nil {
		return nil, errors.New("fl: no client constructor")
	}
	pool, err := newPool(min(c.Workers, c.PerRound), s.NewClient)
	if err != nil {
		return nil, err
	}
	rec := &Record{Config: c, KeptFrom: max(0, c.Rounds-c.KeepRounds)}
	ups := make([][]float32, c.PerRound)
	for i := range ups {
		ups[i] = make([]float32, len(global))
	}
	for r, clients := range Schedule(c) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fl: stopped at round %d of %d: %w", r, c.Rounds, err)
		}
		if s.BeforeRound != nil {
			if err := s.BeforeRound(r, global); err != nil {
				return nil, fmt.Errorf("fl: before round %d: %w", r, err)
			}
		}
		rd, err := s.round(c, pool, r, clients, global, ups, rec)
		if err != nil {
			return nil, err
		}
		rec.Rounds = append(rec.Rounds, rd)
		rec.Down += rd.Down
		rec.Up += rd.Up
		if s.Progress != nil {
			s.Progress(r+1, c.Rounds)
		}
	}
	return rec, nil
}

// round runs round r with the sampled clients, uploads into ups, and
// updates global.
func (s *Sim) round(c Config, pool chan Client, r int, clients []int, global []float32, ups [][]float32, rec *Record) (Round, error) {
	rd := Round{Round: r, Clients: clients, Infos: make([]Info, len(clients))}
	err := parallel.For(len(clients), c.Workers, func(i int) error {
		cl := <-pool
		defer func() { pool <- cl }()
		clear(ups[i])
		info, err := cl.Update(r, clients[i], global, ups[i])
		if err != nil {
			return fmt.Errorf("fl: round %d, client %d: %w", r, clients[i], err)
		}
		rd.Infos[i] = info
		return nil
	})
	if err != nil {
		return Round{}, err
	}
	n := int64(len(clients) * len(global))
	rd.Down, rd.Up = n, n
	if r >= rec.KeptFrom {
		kept := make([][]float32, len(clients))
		for i := range kept {
			kept[i] = slices.Clone(ups[i])
		}
		rec.Uploads = append(rec.Uploads, kept)
		rec.Globals = append(rec.Globals, slices.Clone(global))
	}
	agg := Mean(nil, ups[:len(clients)], Weights(c.Weighting, s.Sizes, clients))
	if c.Aggregation == FedAvg && s.Server == nil {
		copy(global, agg)
		return rd, nil
	}
	if err := s.Server(r, global, agg); err != nil {
		return Round{}, fmt.Errorf("fl: round %d: server step: %w", r, err)
	}
	return rd, nil
}

// Weights returns the aggregation weights of the round's clients under
// rule (BySize: n_k/Σn; Uniform: 1/m), in the order of clients.
func Weights(rule string, sizes, clients []int) []float64 {
	w := make([]float64, len(clients))
	total := 0
	for _, k := range clients {
		total += sizes[k]
	}
	for i, k := range clients {
		if rule == Uniform {
			w[i] = 1 / float64(len(clients))
		} else {
			w[i] = float64(sizes[k]) / float64(total)
		}
	}
	return w
}

// Mean writes Σ_i w[i]·xs[i], accumulated in float64 in order of i, to dst
// (allocated when nil) and returns it. It panics if the lengths differ.
func Mean(dst []float32, xs [][]float32, w []float64) []float32 {
	if len(xs) != len(w) || len(xs) == 0 {
		panic("fl: mean of mismatched or no vectors")
	}
	if dst == nil {
		dst = make([]float32, len(xs[0]))
	}
	for j := range dst {
		s := 0.0
		for i, x := range xs {
			s += float64(w[i] * float64(x[j]))
		}
		dst[j] = float32(s)
	}
	return dst
}

// newPool returns n clients from newClient in a buffered channel.
func newPool(n int, newClient func() (Client, error)) (chan Client, error) {
	pool := make(chan Client, n)
	for range n {
		cl, err := newClient()
		if err != nil {
			return nil, fmt.Errorf("fl: creating a client: %w", err)
		}
		pool <- cl
	}
	return pool, nil
}

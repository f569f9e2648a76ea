// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import "context"

// sweepKey is the context key of a sweep's run context.
type sweepKey struct{}

type sweepValues struct {
	stop context.Context
	note func(string)
}

// withSweep returns ctx carrying the sweep's stop context and the run's
// note function.
func withSweep(ctx, stop context.Context, note func(string)) context.Context {
	return context.WithValue(ctx, sweepKey{}, &sweepValues{stop: stop, note: note})
}

// StopContext returns the context that the first interrupt of the sweep
// ctx's run belongs to cancels (as does the first failure under
// FailFast). An [Executor]'s own context is not cancelled by it: a run is
// expected to finish. Work that can be discarded and done again later,
// such as pretraining a base model the cache does not hold yet, uses
// StopContext instead, so that an interrupt stops it at once; an
// Executor that returns an error because StopContext was cancelled is
// recorded as not run, not as failed. Outside a sweep StopContext
// returns ctx.
func StopContext(ctx context.Context) context.Context {
	if v, ok := ctx.Value(sweepKey{}).(*sweepValues); ok {
		return v.stop
	}
	return ctx
}

// Note shows note on the sweep's progress line, in place of the ETA, until
// Note is called again with "". It is for a long step before a run's own
// work, during which the ETA means nothing, such as pretraining a base
// model ("pretraining the smoke base: step 40/400"). Outside a sweep it
// does nothing.
func Note(ctx context.Context, note string) {
	if v, ok := ctx.Value(sweepKey{}).(*sweepValues); ok {
		v.note(note)
	}
}

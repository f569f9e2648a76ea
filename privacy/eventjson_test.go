// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"reflect"
	"testing"
)

func TestEventJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range []Event{
		Gaussian{Sigma: 2},
		Gaussian{Sigma: 2, Sensitivity: 0.5},
		PoissonGaussian{Q: 0.04, Sigma: 1.5},
		PoissonSampled{Q: 0.1, Event: Gaussian{Sigma: 3}},
		SelfComposed{Event: PoissonGaussian{Q: 0.01, Sigma: 1}, Count: 10000},
		Composed{SelfComposed{Event: PoissonGaussian{Q: 0.01, Sigma: 1}, Count: 200}, Gaussian{Sigma: 8}, EpsilonDelta{Epsilon: 0.1}},
		Composed{},
		EpsilonDelta{Epsilon: math.Inf(1), Delta: 1e-6},
		NonPrivate{},
	} {
		b, err := MarshalEvent(e)
		if err != nil {
			t.Errorf("MarshalEvent(%v): %v", e, err)
			continue
		}
		got, err := UnmarshalEvent(b)
		if err != nil {
			t.Errorf("UnmarshalEvent(%s): %v", b, err)
			continue
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("round trip of %v via %s gave %v", e, b, got)
		}
	}
	if b, _ := MarshalEvent(SelfComposed{Event: PoissonGaussian{Q: 0.04, Sigma: 1.5}, Count: 2250}); string(b) != `{"type":"self_composed","count":2250,"event":{"type":"poisson_gaussian","q":0.04,"sigma":1.5}}` {
		t.Errorf("MarshalEvent printed %s", b)
	}
}

func TestEventJSONErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`{"type":"laplace","b":1}`,
		`{"type":"gaussian"}`,
		`{"type":"gaussian","sigma":-1}`,
		`{"type":"poisson_gaussian","q":1.5,"sigma":1}`,
		`{"type":"poisson_gaussian","sigma":1}`,
		`{"type":"self_composed","count":3}`,
		`{"type":"self_composed","count":-3,"event":{"type":"non_private"}}`,
		`{"type":"gaussian","sigma":1,"bogus":2}`,
		`{"type":"epsilon_delta","epsilon":1,"delta":1}`,
		`not json`,
	} {
		if e, err := UnmarshalEvent([]byte(s)); err == nil {
			t.Errorf("UnmarshalEvent(%s) = %v, want an error", s, e)
		}
	}
	if _, err := MarshalEvent(Gaussian{Sigma: math.NaN()}); err == nil {
		t.Errorf("MarshalEvent(NaN σ): got nil error")
	}
}

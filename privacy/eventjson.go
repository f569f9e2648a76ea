// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// jsonEvent is the JSON form of an Event: a type tag and the event's
// parameters, with nested events for the combinators. For example
//
//	{"type":"self_composed","count":2250,"event":{"type":"poisson_gaussian","q":0.04,"sigma":1.5}}
type jsonEvent struct {
	Type        string      `json:"type"`
	Q           *float64    `json:"q,omitempty"`
	Sigma       *float64    `json:"sigma,omitempty"`
	Sensitivity *float64    `json:"sensitivity,omitempty"`
	Epsilon     *jsonFloat  `json:"epsilon,omitempty"`
	Delta       *float64    `json:"delta,omitempty"`
	Count       *int        `json:"count,omitempty"`
	Event       *jsonEvent  `json:"event,omitempty"`
	Events      []jsonEvent `json:"events,omitempty"`
}

// jsonFloat encodes +Inf as the string "+Inf", which JSON numbers cannot
// hold.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(f), 1) {
		return []byte(`"+Inf"`), nil
	}
	return json.Marshal(float64(f))
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == `"+Inf"` {
		*f = jsonFloat(math.Inf(1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

func ptr[T any](v T) *T { return &v }

func toJSON(e Event) (jsonEvent, error) {
	switch e := e.(type) {
	case Gaussian:
		j := jsonEvent{Type: "gaussian", Sigma: ptr(e.Sigma)}
		if e.Sensitivity != 0 {
			j.Sensitivity = ptr(e.Sensitivity)
		}
		return j, nil
	case PoissonGaussian:
		return jsonEvent{Type: "poisson_gaussian", Q: ptr(e.Q), Sigma: ptr(e.Sigma)}, nil
	case PoissonSampled:
		in, err := toJSON(e.Event)
		return jsonEvent{Type: "poisson_sampled", Q: ptr(e.Q), Event: &in}, err
	case SelfComposed:
		in, err := toJSON(e.Event)
		return jsonEvent{Type: "self_composed", Count: ptr(e.Count), Event: &in}, err
	case Composed:
		j := jsonEvent{Type: "composed", Events: make([]jsonEvent, len(e))}
		for i, x := range e {
			var err error
			if j.Events[i], err = toJSON(x); err != nil {
				return j, err
			}
		}
		return j, nil
	case EpsilonDelta:
		return jsonEvent{Type: "epsilon_delta", Epsilon: ptr(jsonFloat(e.Epsilon)), Delta: ptr(e.Delta)}, nil
	case NonPrivate:
		return jsonEvent{Type: "non_private"}, nil
	case nil:
		return jsonEvent{}, errors.New("privacy: nil event")
	}
	return jsonEvent{}, fmt.Errorf("privacy: cannot encode event %T", e)
}

// MarshalEvent returns the JSON form of e, for run manifests. It returns an
// error if e is invalid.
func MarshalEvent(e Event) ([]byte, error) {
	if e == nil {
		return nil, errors.New("privacy: nil event")
	}
	if err := e.check(); err != nil {
		return nil, err
	}
	j, err := toJSON(e)
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

// UnmarshalEvent parses the JSON form written by MarshalEvent and checks
// the event's parameters. Unknown fields and types are errors.
func UnmarshalEvent(b []byte) (Event, error) {
	var j jsonEvent
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return nil, fmt.Errorf("privacy: decoding event: %w", err)
	}
	e, err := fromJSON(&j)
	if err != nil {
		return nil, err
	}
	if err := e.check(); err != nil {
		return nil, err
	}
	return e, nil
}

func fromJSON(j *jsonEvent) (Event, error) {
	need := func(name string, ok bool) error {
		if !ok {
			return fmt.Errorf("privacy: %s event lacks %q", j.Type, name)
		}
		return nil
	}
	switch j.Type {
	case "gaussian":
		if err := need("sigma", j.Sigma != nil); err != nil {
			return nil, err
		}
		g := Gaussian{Sigma: *j.Sigma}
		if j.Sensitivity != nil {
			g.Sensitivity = *j.Sensitivity
		}
		return g, nil
	case "poisson_gaussian":
		if err := errors.Join(need("q", j.Q != nil), need("sigma", j.Sigma != nil)); err != nil {
			return nil, err
		}
		return PoissonGaussian{Q: *j.Q, Sigma: *j.Sigma}, nil
	case "poisson_sampled":
		if err := errors.Join(need("q", j.Q != nil), need("event", j.Event != nil)); err != nil {
			return nil, err
		}
		in, err := fromJSON(j.Event)
		return PoissonSampled{Q: *j.Q, Event: in}, err
	case "self_composed":
		if err := errors.Join(need("count", j.Count != nil), need("event", j.Event != nil)); err != nil {
			return nil, err
		}
		in, err := fromJSON(j.Event)
		return SelfComposed{Event: in, Count: *j.Count}, err
	case "composed":
		c := make(Composed, len(j.Events))
		for i := range j.Events {
			var err error
			if c[i], err = fromJSON(&j.Events[i]); err != nil {
				return nil, err
			}
		}
		return c, nil
	case "epsilon_delta":
		if err := need("epsilon", j.Epsilon != nil); err != nil {
			return nil, err
		}
		e := EpsilonDelta{Epsilon: float64(*j.Epsilon)}
		if j.Delta != nil {
			e.Delta = *j.Delta
		}
		return e, nil
	case "non_private":
		return NonPrivate{}, nil
	}
	return nil, fmt.Errorf("privacy: unknown event type %q", j.Type)
}

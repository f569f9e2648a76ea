// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package registry

import (
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("test: value")
	if got := r.Names(); len(got) != 0 {
		t.Errorf("Names of an empty registry = %v, want none", got)
	}
	r.Register("b", 2)
	r.Register("a", 1)
	if got, want := r.Names(), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if v, ok := r.Lookup("b"); !ok || v != 2 {
		t.Errorf("Lookup(b) = %v, %v, want 2, true", v, ok)
	}
	if _, ok := r.Lookup("c"); ok {
		t.Errorf("Lookup(c) found a value, want none")
	}
	defer func() {
		if msg := recover(); msg != "test: value registered twice: a" {
			t.Errorf("second Register(a) panicked with %v, want the registered-twice message", msg)
		}
	}()
	r.Register("a", 3)
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package registry provides the name → value registry that each kind of
// pluggable component (methods, attacks) keeps, so that specs can name them.
package registry

import (
	"slices"
	"sync"
)

// Registry maps names to values of one kind. Its zero value is empty and
// ready to use; it is safe for concurrent use.
type Registry[T any] struct {
	kind string // what the values are, for the panic message: "methods: method"
	mu   sync.Mutex
	m    map[string]T
}

// New returns an empty registry; kind names its values in panic messages,
// prefixed by the owning package, e.g. "methods: method".
func New[T any](kind string) *Registry[T] { return &Registry[T]{kind: kind} }

// Register adds v under name. It is meant to be called from init functions;
// it panics if name is taken.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(r.kind + " registered twice: " + name)
	}
	if r.m == nil {
		r.m = make(map[string]T)
	}
	r.m[name] = v
}

// Lookup returns the value registered under name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

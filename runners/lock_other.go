// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !unix

package runners

// tryLock does not lock outside Unix: two processes sweeping the same
// results folder at once may run the same run twice (each write is still
// atomic).
func tryLock(name string) (unlock func(), ok bool, err error) {
	return func() {}, true, nil
}

// held reports false: there are no locks outside Unix.
func held(name string) (bool, error) { return false, nil }

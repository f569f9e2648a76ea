// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package parallel

import (
	"errors"
	"fmt"
	"testing"
)

func TestFor(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 3, 64} {
		for _, n := range []int{0, 1, 7, 100} {
			t.Run(fmt.Sprintf("workers=%d/n=%d", workers, n), func(t *testing.T) {
				out := make([]int, n)
				err := For(n, workers, func(i int) error {
					out[i] = i * i
					if i == 5 || i == 3 {
						return fmt.Errorf("index %d", i)
					}
					return nil
				})
				for i, v := range out {
					if v != i*i {
						t.Fatalf("out[%d] = %d, want %d: an index was skipped", i, v, i*i)
					}
				}
				want := ""
				if n > 3 {
					want = "index 3" // the lowest failing index, whatever finished first
				}
				if got := fmt.Sprint(err); (err == nil) != (want == "") || (err != nil && got != want) {
					t.Errorf("For error = %v, want %q", err, want)
				}
			})
		}
	}
}

func TestForError(t *testing.T) {
	sentinel := errors.New("x")
	if err := For(4, 2, func(i int) error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("For = %v, want the sentinel", err)
	}
}

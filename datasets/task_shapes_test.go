// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCellImage checks CellImage against the reference of rendering the
// scene with one object alone, for every object of many random scenes
// (objects as large and as far from their cell's centre as NewScene
// draws them), and that the other cells of the copy are background.
func TestCellImage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		s := NewScene(rng)
		img := s.Render()
		for _, o := range s.Objects {
			want := Scene{Objects: []Object{o}}.Render()
			if got := CellImage(img, o.Cell); !slices.Equal(got, want) {
				t.Fatalf("CellImage(%s, cell %d) differs from the object rendered alone", s.key(), o.Cell)
			}
		}
		for cell := range 4 {
			if s.at(cell) != nil {
				continue
			}
			for i, v := range CellImage(img, cell) {
				if v != 0 {
					t.Fatalf("CellImage(%s, empty cell %d)[%d] = %g, want background", s.key(), cell, i, v)
				}
			}
		}
	}
}

// TestSceneCells checks SceneCells against the scenes' objects, and that
// it refuses keys that are not scene keys.
func TestSceneCells(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		s := NewScene(rng)
		cells, ok := SceneCells(s.key())
		if !ok {
			t.Fatalf("SceneCells(%q): not ok", s.key())
		}
		want := [4]int{-1, -1, -1, -1}
		for _, o := range s.Objects {
			want[o.Cell] = o.Colour*len(shapeKinds) + o.Kind
		}
		if cells != want {
			t.Fatalf("SceneCells(%q) = %v, want %v", s.key(), cells, want)
		}
		for _, c := range cells {
			if c >= SceneObjectClasses {
				t.Fatalf("SceneCells(%q): class %d ≥ %d", s.key(), c, SceneObjectClasses)
			}
		}
	}
	for _, k := range []string{"fmnist:12", "shapes:-,-,-", "shapes:red.circle,-,-,pink.circle", "shapes:red,-,-,-", "shapes:red.cube,-,-,-"} {
		if _, ok := SceneCells(k); ok {
			t.Errorf("SceneCells(%q): ok, want refused", k)
		}
	}
}

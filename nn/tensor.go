// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// Tensor is a dense float32 array stored row-major in Data. The last
// dimension varies fastest. A Tensor does not own a copy of its shape or data:
// callers that keep one must not modify what they did not allocate.
type Tensor struct {
	Shape []int
	Data  []float32
}

// NewTensor returns a zero tensor of the given shape.
func NewTensor(shape ...int) Tensor {
	return Tensor{Shape: append([]int(nil), shape...), Data: make([]float32, numel(shape))}
}

// Rows returns the size of the first dimension (1 for a scalar).
func (t Tensor) Rows() int {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[0]
}

// Cols returns the number of elements per row: the product of every
// dimension after the first.
func (t Tensor) Cols() int {
	if len(t.Shape) == 0 {
		return 1
	}
	return numel(t.Shape[1:])
}

// Row returns row i as a sub-slice of Data.
func (t Tensor) Row(i int) []float32 {
	c := t.Cols()
	return t.Data[i*c : (i+1)*c]
}

// Clone returns a deep copy of t.
func (t Tensor) Clone() Tensor {
	return Tensor{Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		if s < 0 {
			panic(errNegativeDim)
		}
		n *= s
	}
	return n
}

// Norm returns the Euclidean norm of x, accumulated in float64.
func Norm(x []float32) float64 {
	return math.Sqrt(sumSquares(x))
}

func sumSquares(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(float64(v) * float64(v))
	}
	return s
}

// Dot returns Σ x_i·y_i accumulated in float64. It panics if the lengths
// differ.
func Dot(x, y []float32) float64 {
	if len(x) != len(y) {
		panic(errLength)
	}
	var s float64
	for i, v := range x {
		s += float64(float64(v) * float64(y[i]))
	}
	return s
}

// axpy adds alpha·x to y: y[i] += alpha·x[i], the product rounded, then
// the sum (axpyVec's kernel, then the Go loop).
func axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic(errLength)
	}
	for i := axpyVec(y, y, x, alpha); i < len(x); i++ {
		y[i] += float32(alpha * x[i])
	}
}

// scale multiplies x by alpha in place (scaleVec's kernel, then the Go
// loop).
func scale(alpha float32, x []float32) {
	for i := scaleVec(x, alpha); i < len(x); i++ {
		x[i] *= alpha
	}
}

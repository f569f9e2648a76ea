// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import "fmt"

// The tile and block sizes of kernels.cu.
const (
	// GemmTileM×GemmTileN is the tile of C one block of sgemm computes,
	// with GemmThreadsX×GemmThreadsY threads.
	GemmTileM    = 64
	GemmTileN    = 64
	GemmThreadsX = 16
	GemmThreadsY = 16
	// RowThreads is the block of the one-block-a-row kernels
	// (softmax_rows, layernorm_rows, sumsq_rows); their blockSum needs a
	// power of two.
	RowThreads = 256
	// ElemThreads is the block of the elementwise kernels.
	ElemThreads = 256
)

// The driver's limits on a grid (compute capability 3.0 and later).
const (
	maxGridX  = 1<<31 - 1
	maxGridYZ = 65535
)

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z int }

// A Launch is the shape of one kernel launch.
type Launch struct {
	Grid, Block Dim3
}

// Threads returns the number of threads the launch starts.
func (l Launch) Threads() int {
	return l.Grid.X * l.Grid.Y * l.Grid.Z * l.Block.X * l.Block.Y * l.Block.Z
}

func (l Launch) check(what string) (Launch, error) {
	if l.Grid.X < 1 || l.Grid.Y < 1 || l.Grid.Z < 1 || l.Grid.X > maxGridX || l.Grid.Y > maxGridYZ || l.Grid.Z > maxGridYZ {
		return Launch{}, fmt.Errorf("ptx: %s: grid %d×%d×%d outside the driver's limits", what, l.Grid.X, l.Grid.Y, l.Grid.Z)
	}
	return l, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Gemm returns the launch of sgemm for an m×n C: one block a tile.
func Gemm(m, n int) (Launch, error) {
	if m < 1 || n < 1 {
		return Launch{}, fmt.Errorf("ptx: sgemm of an empty %d×%d product", m, n)
	}
	return Launch{Grid: Dim3{ceilDiv(n, GemmTileN), ceilDiv(m, GemmTileM), 1}, Block: Dim3{GemmThreadsX, GemmThreadsY, 1}}.check("sgemm")
}

// Rows returns the launch of a one-block-a-row kernel over rows rows.
func Rows(rows int) (Launch, error) {
	return Launch{Grid: Dim3{rows, 1, 1}, Block: Dim3{RowThreads, 1, 1}}.check("rows")
}

// Elems returns the launch of an elementwise kernel over n elements.
func Elems(n int) (Launch, error) {
	return Launch{Grid: Dim3{ceilDiv(n, ElemThreads), 1, 1}, Block: Dim3{ElemThreads, 1, 1}}.check("elementwise")
}

// ScaleRows returns the launch of scale_rows over n rows of p elements:
// grid.y is the row, so n is at most 65535.
func ScaleRows(n, p int) (Launch, error) {
	return Launch{Grid: Dim3{ceilDiv(p, ElemThreads), n, 1}, Block: Dim3{ElemThreads, 1, 1}}.check("scale_rows")
}

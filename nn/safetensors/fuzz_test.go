// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"bytes"
	"testing"
)

// FuzzDecode checks that no input makes Decode panic, and that whatever
// Decode accepts survives a write and a second read unchanged (floats
// widened to F32 and integers to I64, the dtypes the writer knows). The seed
// corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	if err := Encode(&buf, testTensors(), map[string]string{"config": `{"a":1}`}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(file(`{"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Decode(b)
		if err != nil {
			return
		}
		ts := make([]Tensor, len(file.Tensors))
		for i, t := range file.Tensors {
			ts[i] = Tensor{Name: t.Name, DType: F32, Shape: t.Shape, Data: t.Data}
			if t.DType.IsInt() {
				ts[i] = Tensor{Name: t.Name, DType: I64, Shape: t.Shape, Ints: t.Ints}
			}
		}
		var out bytes.Buffer
		if err := Encode(&out, ts, file.Metadata); err != nil {
			t.Fatalf("cannot write what Decode accepted: %v", err)
		}
		again, err := Decode(out.Bytes())
		if err != nil {
			t.Fatalf("cannot read what Encode wrote: %v", err)
		}
		sameTensors(t, again.Tensors, ts)
		if len(again.Metadata) != len(file.Metadata) {
			t.Fatalf("metadata: got %v, want %v", again.Metadata, file.Metadata)
		}
		for k, v := range file.Metadata {
			if again.Metadata[k] != v {
				t.Fatalf("metadata %q: got %q, want %q", k, again.Metadata[k], v)
			}
		}
	})
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package safetensors provides a reader and a writer for the safetensors
// checkpoint format, the format the Hugging Face ecosystem uses for tensors,
// so that checkpoints written by repro open in other tools and the other way
// round.
//
// # Format
//
// A safetensors file is, in order:
//
//  1. N, the length of the header in bytes, as an 8-byte little-endian
//     unsigned integer;
//  2. N bytes of header: a UTF-8 JSON object that maps every tensor name to
//     {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, plus an
//     optional "__metadata__" object of string → string; the header starts
//     with '{' and may be padded at the end with spaces;
//  3. the data buffer: every tensor's values, little-endian, row-major, at
//     data_offsets counted from the start of the buffer. The tensors tile the
//     buffer exactly, with no hole and no overlap.
//
// # Writing
//
// Encode and EncodeConfig write F32 and I64 tensors to an io.Writer. Writing
// is deterministic: header keys are sorted in byte order, the JSON has no
// insignificant white space, the header is padded with spaces so that the
// data start at a multiple of 8 bytes, and the data are laid out by
// decreasing element size and then by name, so that every tensor is aligned
// to its element size. Equal content therefore gives equal bytes, and Sum or
// HashFile give a content hash for manifests.
//
// The package writes no files itself: it imports nothing of repro, and a
// checkpoint file must be written atomically (a temporary file in the target
// folder, synced and renamed over the target, then the folder synced), which
// the caller does with the one atomic-write helper of the program that
// writes it, passing Encode or EncodeConfig as the function that fills the
// temporary file.
//
// # Reading
//
// Decode, ReadFile and Load treat their input as untrusted. Every number in
// the header is checked before it is used: the header length against the
// file and a 100 MB limit, each tensor's data_offsets against the data (a
// reversed pair [begin > end] is an error) and against its dtype and shape,
// and the tensors' ranges against each other, which must tile the data
// exactly (the tensors may come in any order in the header, as other writers
// order them by dtype). Names, fields and metadata keys may not repeat, and
// nothing but white space may follow the header's JSON object.
//
// A bad file gives an *Error that names the file, the tensor and what is
// wrong; its Err field is one of the sentinel errors ErrTruncated, ErrHeader,
// ErrDType, ErrShape, ErrOffsets, ErrDuplicate, ErrMissing, ErrUnexpected or
// ErrConfig, for errors.Is.
//
// Float tensors (F32, F64, F16, BF16) are read into Tensor.Data as float32:
// F32, F16 and BF16 exactly, F64 rounded to nearest. Integer and boolean
// tensors (I8, I16, I32, I64, U8, U16, U32, U64, BOOL) are read into
// Tensor.Ints; a U64 above 2⁶³ − 1 or a BOOL byte other than 0 or 1 is an
// error. The 8-bit float types are not supported.
//
// # Checkpoints
//
// EncodeConfig and Load store a set of named tensors with a JSON
// configuration in the metadata key "config":
//
//	err := safetensors.EncodeConfig(w, tensors, cfg) // w: an atomic file writer
//	...
//	f, err := safetensors.Load("model.safetensors", &cfg) // decodes the config
//	model := build(cfg)
//	err = f.Fill(model.Tensors()) // copies values, checks names and shapes
//
// References:
//
//   - Hugging Face, safetensors format description,
//     https://huggingface.co/docs/safetensors (the README of
//     github.com/huggingface/safetensors).
package safetensors

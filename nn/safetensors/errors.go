// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per kind of problem; an *Error wraps exactly one.
var (
	// ErrTruncated: the file ends before its header or its data does (a
	// tensor's data_offsets reach past the end of the file).
	ErrTruncated = errors.New("truncated file")
	// ErrHeader: the header length or the header JSON is malformed.
	ErrHeader = errors.New("bad header")
	// ErrDType: a dtype is unknown, unsupported, or a value does not fit it.
	ErrDType = errors.New("bad dtype")
	// ErrShape: a shape is malformed, or does not match the data or what the
	// caller expects.
	ErrShape = errors.New("bad shape")
	// ErrOffsets: data offsets are reversed, overlap, leave a hole in the
	// data or bytes after it, or disagree with dtype and shape.
	ErrOffsets = errors.New("bad data offsets")
	// ErrDuplicate: a name appears twice.
	ErrDuplicate = errors.New("duplicate name")
	// ErrMissing: a tensor or metadata key the caller asked for is absent.
	ErrMissing = errors.New("missing")
	// ErrUnexpected: the file holds a tensor the caller did not ask for.
	ErrUnexpected = errors.New("unexpected tensor")
	// ErrConfig: the configuration in the metadata does not decode into the
	// caller's value.
	ErrConfig = errors.New("bad config")
)

// Error describes what is wrong with a safetensors file or with tensors
// given to the writer.
type Error struct {
	Path   string // file name, "" when decoding bytes
	Tensor string // tensor concerned, "" for file-level problems
	Msg    string // what is wrong
	Err    error  // one of the sentinel errors
}

func (e *Error) Error() string {
	s := "safetensors: "
	if e.Path != "" {
		s += e.Path + ": "
	}
	if e.Tensor != "" {
		s += fmt.Sprintf("tensor %q: ", e.Tensor)
	}
	return s + e.Msg
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

func errorf(sentinel error, tensor, format string, args ...any) *Error {
	return &Error{Tensor: tensor, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// withPath sets the path of err if it is an *Error without one.
func withPath(err error, path string) error {
	var e *Error
	if errors.As(err, &e) && e.Path == "" {
		e.Path = path
	}
	return err
}

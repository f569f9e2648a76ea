// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"
)

// TestZlibLenFraming pins the difference between zlibLen and the length
// the zlib-ratio attack's reference implementation measures (Carlini et
// al. use Python's zlib.compress). The reference lengths were computed by
// Python 3.11.7 with zlib 1.2.13: len(zlib.compress(s.encode())), the
// default level 6. Go's compress/zlib ends every stream with an empty
// final stored block (3 header bits, padding to a byte, LEN/NLEN
// 00 00 ff ff) where zlib marks the last data block final, so Go's length
// is 4 or 5 bytes longer as the padding falls, 3 for the empty string
// (no data block), and more where Go's encoder chooses other matches.
func TestZlibLenFraming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s      string
		python int // len(zlib.compress(s.encode())), Python 3.11.7, zlib 1.2.13
		extra  int // zlibLen(s) - python
	}{
		{"", 8, 3},
		{"a", 9, 4},
		{"the secret code is 1 2 3 4 5 6", 38, 4},
		{"abcabcabcabcabcabcabcabc", 13, 4},
		{"12 7 301 7 12 7 301 7 44", 22, 5},
		{"the applicant , mr john smith , was born in 1970 and lives in paris .", 71, 5},
	} {
		got := zlibLen(tc.s)
		if got != tc.python+tc.extra {
			t.Errorf("zlibLen(%q) = %d, want Python's %d + %d", tc.s, got, tc.python, tc.extra)
		}
		if tc.extra < 3 || tc.extra > 5 {
			t.Errorf("%q: extra %d bytes, want 3 to 5 (the stored block's framing)", tc.s, tc.extra)
		}
		// The framing: the stream decompresses to s and its last 8 bytes
		// are LEN/NLEN of the empty stored block, then the Adler-32.
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write([]byte(tc.s))
		w.Close()
		z := b.Bytes()
		if !bytes.Equal(z[len(z)-8:len(z)-4], []byte{0, 0, 0xff, 0xff}) {
			t.Errorf("%q: stream ends % x, want an empty stored block (00 00 ff ff) before the Adler-32", tc.s, z[len(z)-8:])
		}
		r, err := zlib.NewReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(r)
		if err != nil || string(back) != tc.s {
			t.Errorf("%q: decompressed %q, %v", tc.s, back, err)
		}
	}
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeManifest checks that no input makes DecodeManifest panic and
// that every manifest it accepts encodes again.
func FuzzDecodeManifest(f *testing.F) {
	b, err := json.Marshal(testManifest("0123456789abcdef", OK))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest("m.json", b)
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			// Params that JSON cannot encode again (none can come from
			// JSON) or a NaN epsilon in the config.
			if m.Config.Epsilon == m.Config.Epsilon {
				t.Fatalf("decoded manifest does not encode: %v", err)
			}
		}
	})
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// ConfigKey is the metadata key under which EncodeConfig stores the
// configuration.
const ConfigKey = "config"

// ReadFile reads and validates the safetensors file path. See Decode.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := Decode(b)
	if err != nil {
		return nil, withPath(err, path)
	}
	return f, nil
}

// EncodeConfig writes the tensors ts to w as Encode does, with config
// encoded as JSON by encoding/json in the metadata key "config". A nil
// config writes no metadata. EncodeConfig writes to w only; a caller that
// wants a file writes it atomically (temporary file, sync, rename), as repro
// writes every file, so that a crash never leaves half a checkpoint.
func EncodeConfig(w io.Writer, ts []Tensor, config any) error {
	var meta map[string]string
	if config != nil {
		b, err := json.Marshal(config)
		if err != nil {
			return fmt.Errorf("safetensors: encoding config: %w", err)
		}
		meta = map[string]string{ConfigKey: string(b)}
	}
	return Encode(w, ts, meta)
}

// Load reads the safetensors file path and, if config is not nil, decodes
// its metadata "config" into config as File.Config does. The caller then
// takes the tensors with File.Fill or File.Float32.
func Load(path string, config any) (*File, error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	if config != nil {
		if err := f.Config(config); err != nil {
			return nil, withPath(err, path)
		}
	}
	return f, nil
}

// HashFile returns the SHA-256 of the content of the file path, in
// lower-case hexadecimal. Since writing is deterministic, it identifies a
// checkpoint's content in a manifest.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("safetensors: hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

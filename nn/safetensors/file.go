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
	"path/filepath"
)

// ConfigKey is the metadata key under which Save stores the configuration.
const ConfigKey = "config"

// WriteFile writes tensors ts and metadata meta to the file path, atomically:
// the data go to a temporary file in the same directory, which is synced,
// given mode 0644 and renamed over path; the directory is then synced. On
// error path is left as it was and the temporary file is removed.
func WriteFile(path string, ts []Tensor, meta map[string]string) (err error) {
	// Check the tensors before creating anything.
	if _, _, err := encodeHeader(ts, meta); err != nil {
		return withPath(err, path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := Encode(tmp, ts, meta); err != nil {
		return fmt.Errorf("safetensors: writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("safetensors: syncing %s: %w", dir, err)
	}
	return nil
}

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

// Save writes the tensors ts to path atomically (see WriteFile), with config
// encoded as JSON by encoding/json in metadata key "config". A nil config
// writes no metadata.
func Save(path string, ts []Tensor, config any) error {
	var meta map[string]string
	if config != nil {
		b, err := json.Marshal(config)
		if err != nil {
			return fmt.Errorf("safetensors: encoding config for %s: %w", path, err)
		}
		meta = map[string]string{ConfigKey: string(b)}
	}
	return WriteFile(path, ts, meta)
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

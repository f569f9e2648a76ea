// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pretrain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// staleLock is the age after which the fallback lock is taken to belong to a
// process that died.
const staleLock = 6 * time.Hour

// lockFile takes an exclusive lock on path on systems without flock: the
// lock is a directory path+".d" created with os.Mkdir, which is atomic
// everywhere. A lock older than staleLock is removed, since a dead process
// cannot release it.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	dir := path + ".d"
	for {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return func() { os.Remove(dir) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("pretrain: lock: %w", err)
		}
		if st, err := os.Stat(dir); err == nil && time.Since(st.ModTime()) > staleLock {
			os.Remove(dir)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fnv1a64 is FNV-1a (64 bits) written out from its definition (Fowler,
// Noll and Vo; offset basis 14695981039346656037, prime 1099511628211), a
// reference for PretrainHeldOut's use of hash/fnv.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func TestPretrainHeldOut(t *testing.T) {
	t.Parallel()
	// Test vector of the FNV reference page: FNV-1a 64 of "a" is
	// 0xaf63dc4c8601ec8c.
	if got := fnv1a64("a"); got != 0xaf63dc4c8601ec8c {
		t.Fatalf("fnv1a64(a) = %#x, want 0xaf63dc4c8601ec8c", got)
	}
	n := 0
	for i := range 8000 {
		it := fmt.Sprintf("fmnist:%d", i)
		want := fnv1a64(it)%PretrainHeldOutEvery == 0
		if got := PretrainHeldOut([]string{it}); got != want {
			t.Fatalf("PretrainHeldOut(%s) = %v, want %v", it, got, want)
		}
		if want {
			n++
		}
	}
	// 1/8 of 8000 is 1000; a share off by more than 6 binomial standard
	// deviations (6·√(8000·⅛·⅞) ≈ 178) would mean a broken hash.
	if n < 822 || n > 1178 {
		t.Errorf("%d of 8000 items held out, want about 1000", n)
	}
	if !PretrainHeldOut([]string{"x", "fmnist:" + heldOutOrigin(t)}) || PretrainHeldOut(nil) {
		t.Error("PretrainHeldOut: want true when any item is held out, false for none")
	}
}

// heldOutOrigin returns a Fashion-MNIST origin whose item is held out.
func heldOutOrigin(t *testing.T) string {
	for i := range 1000 {
		if fnv1a64(fmt.Sprintf("fmnist:%d", i))%PretrainHeldOutEvery == 0 {
			return strconv.Itoa(i)
		}
	}
	t.Fatal("no held-out origin below 1000")
	return ""
}

// publicItem reports whether a source item is on the public side of the
// fixed role hashes.
func publicItem(t *testing.T, it string) bool {
	t.Helper()
	if o, ok := strings.CutPrefix(it, "fmnist:"); ok {
		n, err := strconv.Atoi(o)
		if err != nil {
			t.Fatalf("bad item %q", it)
		}
		return fashionIsPublic(int32(n))
	}
	return isPublicKey(it)
}

// TestTuneVariant checks the -tune tasks: every private, holdout and test
// example is about a public item; the test (validation) items are held out
// of pretraining and the others are not; the three splits share no item,
// and none with the base task's private, holdout or test splits at any of
// three seeds; the questions are the private task's (every kind of the
// base's private split appears); sizes are tuneSizeOf's; there are no
// canaries; and the public split is the base's.
func TestTuneVariant(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"fashion-vqa", "shapes-vqa", "fashion-cls", "fashion-upper"} {
		task := base + TuneSuffix
		d := smoke(t, task, 0)
		sz := tuneSizeOf(task, Smoke)
		if got := []int{len(d.Private), len(d.Holdout), len(d.Test), len(d.Canaries)}; !slices.Equal(got, []int{sz.Train, sz.Holdout, sz.Validation, 0}) {
			t.Fatalf("%s: private, holdout, test, canaries %v, want %v and no canaries", task, got, sz)
		}
		private := map[string]bool{} // items of every base split but public, seeds 0–2
		kinds := map[string]bool{}
		for seed := range uint64(3) {
			b := smoke(t, base, seed)
			for _, split := range privateSide {
				for _, ex := range b.Split(split) {
					for _, it := range ex.Items {
						private[it] = true
					}
					if seed == 0 && split == "private" && ex.Canary < 0 {
						kinds[ex.Kind] = true
					}
				}
			}
		}
		if pb := smoke(t, base, 0); len(pb.Public) != len(d.Public) || !slices.Equal(pb.Public[0].Prompt, d.Public[0].Prompt) {
			t.Errorf("%s: public split differs from %s's", task, base)
		}
		seen := map[string]string{}
		got := map[string]bool{}
		for _, split := range privateSide {
			for i, ex := range d.Split(split) {
				where := fmt.Sprintf("%s %s", task, ex.ID)
				if want := fmt.Sprintf("%s/%s/%d", task, split, i); ex.ID != want {
					t.Fatalf("%s: want ID %s", where, want)
				}
				checkExample(t, d, split, &ex, where)
				if split == "test" {
					got[ex.Kind] = true
				}
				for _, it := range ex.Items {
					switch {
					case !publicItem(t, it):
						t.Fatalf("%s: item %s is private-side", where, it)
					case private[it]:
						t.Fatalf("%s: item %s is in a private-side split of %s", where, it, base)
					case PretrainHeldOut([]string{it}) != (split == "test"):
						t.Fatalf("%s: item %s held out of pretraining: %v in split %s", where, it, PretrainHeldOut([]string{it}), split)
					case seen[it] != "":
						t.Fatalf("%s: item %s also in %s", where, it, seen[it])
					}
					seen[it] = split
				}
			}
		}
		for k := range kinds {
			if !got[k] {
				t.Errorf("%s: no validation question of kind %s", task, k)
			}
		}
	}
}

// TestTuneTooSmall checks that a -tune variant whose pool has too few
// public images says so: at small the embedded subset's 404 held-out
// public images fill the validation split, 4000 would not. It changes
// tuneSizes, so it must not run in parallel (the parallel tests wait until
// it returns).
func TestTuneTooSmall(t *testing.T) {
	saved := tuneSizes[Small]
	defer func() { tuneSizes[Small] = saved }()
	s := saved
	s.Validation = 4000
	tuneSizes[Small] = s
	_, err := Build("fashion-vqa-tune", &Options{Scale: Small})
	if err == nil || !strings.Contains(err.Error(), "needs 4000 public Fashion-MNIST images held out of pretraining") {
		t.Errorf("got error %v, want one about too few held-out public images", err)
	}
}

// TestPrivateSizeTune checks PrivateSize against the private split that
// Build makes for every -tune task at smoke (the runners' step forecast
// rests on it): Train examples and no canaries, and no size claimed for
// fl-mm-tune.
func TestPrivateSizeTune(t *testing.T) {
	for _, task := range Tasks() {
		if !strings.HasSuffix(task, TuneSuffix) {
			continue
		}
		n, ok := PrivateSize(task, Smoke)
		if task == "fl-mm"+TuneSuffix {
			if ok {
				t.Errorf("%s: PrivateSize claims %d", task, n)
			}
			continue
		}
		d := smoke(t, task, 0)
		if !ok || n != len(d.Private) {
			t.Errorf("%s: PrivateSize = %d, %v; Build made %d private examples", task, n, ok, len(d.Private))
		}
	}
}

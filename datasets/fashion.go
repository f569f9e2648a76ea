// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// DefaultFashionDir is where Debian's dataset-fashion-mnist package installs
// the four gzip IDX files of the full Fashion-MNIST release.
const DefaultFashionDir = "/usr/share/datasets/fashion-mnist"

// FashionTrainLen and FashionTestLen are the sizes of the Fashion-MNIST
// training and test files; Fashion.Origin numbers test images from
// FashionTrainLen on.
const (
	FashionTrainLen = 60000
	FashionTestLen  = 10000
)

// FashionClasses are the ten Fashion-MNIST labels as single vocabulary words
// (T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag,
// Ankle boot).
var FashionClasses = []string{"tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot"}

// FashionCoarse are the four coarse categories of the public fashion-cls
// pretraining task, and FashionCoarseOf maps a fine label to its coarse one:
// upper-body garments (T-shirt, pullover, coat, shirt), long garments
// (trouser, dress), footwear (sandal, sneaker, boot) and accessories (bag).
var (
	FashionCoarse   = []string{"upper", "long", "footwear", "accessory"}
	FashionCoarseOf = []int{0, 1, 0, 1, 0, 2, 0, 2, 3, 2}
)

// Fashion is a pool of Fashion-MNIST images: the embedded subset or the full
// release read from a directory. It is read-only once loaded and may be
// shared between goroutines.
type Fashion struct {
	// Images holds Len()·784 grayscale bytes, one 28×28 image after another,
	// row-major, 0 = background.
	Images []byte
	// Labels holds the fine label (0–9) of each image.
	Labels []uint8
	// Origin holds each image's index in the release: 0–59999 for the
	// training file, 60000–69999 for the test file. It identifies an image
	// whatever the source, so the embedded subset and the full set agree.
	Origin []int32
	// Source is "embedded" or the directory the files were read from.
	Source string
}

// Len returns the number of images.
func (f *Fashion) Len() int { return len(f.Labels) }

// Image returns image i as a new RGB CHW float32 slice of length ImageLen
// with values in [0, 1]; the gray level is replicated to the three channels.
func (f *Fashion) Image(i int) []float32 {
	return GrayToRGB(f.Images[i*784 : (i+1)*784])
}

// The files of the Fashion-MNIST release, and the SHA-256 of their
// decompressed contents (computed with `zcat FILE | sha256sum` on Debian's
// dataset-fashion-mnist 0.0~git20200523.55506a9-1). Hashing the decompressed
// bytes accepts any gzip recompression of the same data.
var fashionFiles = []struct{ images, labels, imagesSum, labelsSum string }{
	{"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
		"c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
		"bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9"},
	{"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
		"5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
		"0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"},
}

//go:embed data/fashion-mnist/*.gz
var embeddedFashion embed.FS

// Embedded subset files (see data/fashion-mnist/README.md) and the SHA-256 of
// their decompressed contents.
const (
	embeddedImages    = "data/fashion-mnist/subset-images-idx3-ubyte.gz"
	embeddedLabels    = "data/fashion-mnist/subset-labels-idx1-ubyte.gz"
	embeddedOrigin    = "data/fashion-mnist/subset-origin-idx1-int.gz"
	embeddedPerClass  = 800 // 700 from the training file, 100 from the test file
	embeddedFashionSz = 10 * embeddedPerClass
)

var (
	embeddedOnce = sync.OnceValues(loadEmbeddedFashion)
	dirCache     sync.Map // cleaned directory → *dirEntry
)

type dirEntry struct {
	once sync.Once
	f    *Fashion
	err  error
}

// LoadFashion returns the Fashion-MNIST pool: the embedded subset when dir is
// empty, otherwise the full release read from dir, which must hold the four
// files train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each gzipped (".gz", as
// Debian ships them) or not. The decompressed contents must match the
// release's SHA-256; a missing, truncated, corrupt or different file is an
// error naming the file. Results are cached per directory.
func LoadFashion(dir string) (*Fashion, error) {
	if dir == "" {
		return embeddedOnce()
	}
	dir = filepath.Clean(dir)
	e, _ := dirCache.LoadOrStore(dir, &dirEntry{})
	ent := e.(*dirEntry)
	ent.once.Do(func() { ent.f, ent.err = loadFashionDir(dir) })
	return ent.f, ent.err
}

// FashionDirPresent reports whether dir looks like it holds the full release
// (its training images file exists); it does not validate the files.
func FashionDirPresent(dir string) bool {
	for _, ext := range []string{".gz", ""} {
		if _, err := os.Stat(filepath.Join(dir, fashionFiles[0].images+ext)); err == nil {
			return true
		}
	}
	return false
}

func loadFashionDir(dir string) (*Fashion, error) {
	f := &Fashion{Source: dir}
	type check struct {
		x          *IDX
		path, want string
	}
	var checks []check
	// Decode everything first, so a missing or truncated file is reported
	// before a checksum mismatch elsewhere.
	for part, files := range fashionFiles {
		img, imgPath, err := readIDXFile(os.DirFS(dir), dir, files.images, "")
		if err != nil {
			return nil, err
		}
		lab, labPath, err := readIDXFile(os.DirFS(dir), dir, files.labels, "")
		if err != nil {
			return nil, err
		}
		offset := int32(0)
		if part == 1 {
			offset = FashionTrainLen
		}
		if err := f.appendPart(img, lab, nil, offset); err != nil {
			return nil, fmt.Errorf("datasets: %s: %w", imgPath, err)
		}
		checks = append(checks, check{img, imgPath, files.imagesSum}, check{lab, labPath, files.labelsSum})
	}
	for _, c := range checks {
		if got := c.x.Sum256(); got != c.want {
			return nil, fmt.Errorf("datasets: %s: decoded contents have SHA-256 %s, want %s (not the Fashion-MNIST release)", c.path, got, c.want)
		}
	}
	return f, nil
}

func loadEmbeddedFashion() (*Fashion, error) {
	var x [3]*IDX
	for i, name := range []string{embeddedImages, embeddedLabels, embeddedOrigin} {
		r, err := embeddedFashion.Open(name)
		if err != nil {
			return nil, fmt.Errorf("datasets: embedded %s: %w", name, err)
		}
		x[i], err = DecodeIDX(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("datasets: embedded %s: %w", name, err)
		}
	}
	f := &Fashion{Source: "embedded"}
	if err := f.appendPart(x[0], x[1], x[2], 0); err != nil {
		return nil, fmt.Errorf("datasets: embedded fashion-mnist: %w", err)
	}
	return f, nil
}

// readIDXFile reads name (or name.gz) from fsys and checks the SHA-256 of its
// decoded contents against want (hex) when want is not empty.
func readIDXFile(fsys fs.FS, dir, name, want string) (*IDX, string, error) {
	path := name + ".gz"
	r, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		path = name
		r, err = fsys.Open(path)
	}
	full := filepath.Join(dir, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("datasets: %s(.gz): missing Fashion-MNIST file", filepath.Join(dir, name))
		}
		return nil, "", fmt.Errorf("datasets: %w", err)
	}
	defer r.Close()
	x, err := DecodeIDX(r)
	if err != nil {
		return nil, "", fmt.Errorf("datasets: %s: %w", full, err)
	}
	if want != "" {
		if got := x.Sum256(); got != want {
			return nil, "", fmt.Errorf("datasets: %s: decoded contents have SHA-256 %s, want %s (not the Fashion-MNIST release)", full, got, want)
		}
	}
	return x, full, nil
}

// appendPart appends images with their labels and origins (or, when origin is
// nil, offset+i) to f after checking shapes and label range.
func (f *Fashion) appendPart(img, lab, origin *IDX, offset int32) error {
	if img.Type != IDXUint8 || len(img.Dims) != 3 || img.Dims[1] != 28 || img.Dims[2] != 28 {
		return fmt.Errorf("images: want unsigned bytes of dimensions [N 28 28], got type 0x%02x %v", img.Type, img.Dims)
	}
	n := img.Dims[0]
	if lab.Type != IDXUint8 || len(lab.Dims) != 1 || lab.Dims[0] != n {
		return fmt.Errorf("labels: want %d unsigned bytes, got type 0x%02x %v", n, lab.Type, lab.Dims)
	}
	for i, l := range lab.Uint8 {
		if l > 9 {
			return fmt.Errorf("labels: label %d of image %d out of range [0, 9]", l, i)
		}
	}
	if origin != nil && (origin.Type != IDXInt32 || len(origin.Dims) != 1 || origin.Dims[0] != n) {
		return fmt.Errorf("origin: want %d int32 values, got type 0x%02x %v", n, origin.Type, origin.Dims)
	}
	f.Images = append(f.Images, img.Uint8...)
	f.Labels = append(f.Labels, lab.Uint8...)
	for i := range n {
		o := offset + int32(i)
		if origin != nil {
			o = origin.Int32[i]
			if o < 0 || o >= FashionTrainLen+FashionTestLen {
				return fmt.Errorf("origin: index %d of image %d out of range", o, i)
			}
		}
		f.Origin = append(f.Origin, o)
	}
	return nil
}

// Sum256 returns the hex SHA-256 of x's IDX encoding (the decompressed file).
func (x *IDX) Sum256() string {
	h := sha256.New()
	h.Write([]byte{0, 0, x.Type, byte(len(x.Dims))})
	for _, d := range x.Dims {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(d)))
	}
	if x.Type == IDXUint8 {
		h.Write(x.Uint8)
	} else {
		buf := make([]byte, 0, 4*len(x.Int32))
		for _, v := range x.Int32 {
			buf = binary.BigEndian.AppendUint32(buf, uint32(v))
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

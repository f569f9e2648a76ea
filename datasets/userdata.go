// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // register JPEG for user images
	_ "image/png"  // register PNG for user images
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxUserImagePixels bounds the size of a user image (width·height) so a
// corrupt or hostile header cannot exhaust memory.
const MaxUserImagePixels = 1 << 24

// maxJSONLLine bounds one JSONL line.
const maxJSONLLine = 1 << 20

// LoadVQA reads a user VQA data set: a JSONL file whose lines are objects
// {"image": PATH, "question": TEXT, "answer": TEXT} (other fields are
// ignored, blank lines skipped), with PATH a PNG or JPEG file relative to
// imageDir; an empty imageDir means the JSONL file's directory. Images are
// resized to 28×28 RGB (FromImage); text is tokenised with the project
// vocabulary, so words outside it become Unk. Examples are generative:
// prompt "<bos> <image> QUESTION", answer "ANSWER <eos>", ID "user/LINE".
// Errors name the file and line: malformed JSON, a missing or empty field,
// a missing or undecodable image.
func LoadVQA(jsonlPath, imageDir string) ([]Example, error) {
	f, err := os.Open(jsonlPath)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	if imageDir == "" {
		imageDir = filepath.Dir(jsonlPath)
	}
	return ReadVQA(f, jsonlPath, os.DirFS(imageDir))
}

// ReadVQA parses a user VQA JSONL stream r as LoadVQA does, opening image
// paths (slash-separated, relative) in images; name labels errors.
func ReadVQA(r io.Reader, name string, images fs.FS) ([]Example, error) {
	v := Vocab()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLLine)
	var out []Example
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("datasets: %s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		var rec struct {
			Image    *string `json:"image"`
			Question *string `json:"question"`
			Answer   *string `json:"answer"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&rec); err != nil {
			return nil, fail("bad JSON: %v", err)
		}
		if dec.More() {
			return nil, fail("bad JSON: more than one value on the line")
		}
		for _, f := range []struct {
			key string
			val *string
		}{{"image", rec.Image}, {"question", rec.Question}, {"answer", rec.Answer}} {
			if f.val == nil || strings.TrimSpace(*f.val) == "" {
				return nil, fail("missing or empty %q", f.key)
			}
		}
		p := path.Clean(filepath.ToSlash(*rec.Image))
		if !fs.ValidPath(p) {
			return nil, fail("image path %q must be relative and inside the image folder", *rec.Image)
		}
		img, err := readUserImage(images, p)
		if err != nil {
			return nil, fail("image %s: %v", p, err)
		}
		ex := newExample(fmt.Sprintf("user/%d", line))
		ex.Kind = "user"
		ex.Items = []string{"user:" + p}
		ex.Images = [][]float32{img}
		ex.Prompt = encodeUser(v, v.Encode(nil, "<bos> <image>"), *rec.Question)
		ex.Answer = append(encodeUser(v, nil, *rec.Answer), EOS)
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("datasets: %s: a line is longer than %d bytes", name, maxJSONLLine)
		}
		return nil, fmt.Errorf("datasets: %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("datasets: %s: no examples", name)
	}
	return out, nil
}

func readUserImage(fsys fs.FS, p string) ([]float32, error) {
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("not found")
		}
		return nil, err
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a PNG or JPEG image: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxUserImagePixels {
		return nil, fmt.Errorf("%s of %d×%d pixels, want 1 to %d pixels", format, cfg.Width, cfg.Height, MaxUserImagePixels)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("bad %s: %v", format, err)
	}
	return FromImage(img), nil
}

// encodeUser encodes user text, turning special tokens written in it (such
// as "<image>") into Unk so user text cannot add placeholders or end markers.
func encodeUser(v *Vocabulary, dst []int, text string) []int {
	n := len(dst)
	dst = v.Encode(dst, text)
	for i := n; i < len(dst); i++ {
		if dst[i] < len(Specials) {
			dst[i] = Unk
		}
	}
	return dst
}

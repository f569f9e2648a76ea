// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func pngBytes(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func userFS(t testing.TB) fstest.MapFS {
	var jb bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 40, 30))
	if err := jpeg.Encode(&jb, img, nil); err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{
		"img/red.png":   {Data: pngBytes(t, 64, 48, color.NRGBA{255, 0, 0, 255})},
		"img/black.jpg": {Data: jb.Bytes()},
		"notes.txt":     {Data: []byte("not an image")},
	}
}

func TestLoadVQA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, f := range userFS(t) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jsonl := `{"image": "img/red.png", "question": "What colour is the item?", "answer": "red", "extra": 1}

{"image": "img/black.jpg", "question": "is there a square ?", "answer": "No"}
`
	path := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(path, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadVQA(path, "")
	if err != nil {
		t.Fatal(err)
	}
	v := Vocab()
	if len(got) != 2 || got[0].ID != "user/1" || got[1].ID != "user/3" {
		t.Fatalf("got %d examples %v, want user/1 and user/3", len(got), got)
	}
	if p, a := v.Decode(got[0].Prompt), v.Decode(got[0].Answer); p != "<bos> <image> what colour is the item ?" || a != "red <eos>" {
		t.Errorf("example 1: prompt %q answer %q", p, a)
	}
	if a := v.Decode(got[1].Answer); a != "no <eos>" {
		t.Errorf("example 2: answer %q, want lower-cased \"no <eos>\"", a)
	}
	red := got[0].Images[0]
	if len(red) != ImageLen || red[0] != 1 || red[784] != 0 || red[2*784+100] != 0 {
		t.Errorf("red image: channels %v %v %v, want 1 0 0", red[0], red[784], red[2*784+100])
	}
	if got[0].Label != -1 || got[0].Canary != -1 || got[0].Client != -1 {
		t.Errorf("example 1: label %d canary %d client %d, want -1", got[0].Label, got[0].Canary, got[0].Client)
	}
}

func TestReadVQAErrors(t *testing.T) {
	t.Parallel()
	fsys := userFS(t)
	good := `{"image": "img/red.png", "question": "q", "answer": "a"}` + "\n"
	for _, tc := range []struct {
		desc, in, want string
	}{
		{"bad json", good + "{not json}\n", "u.jsonl:2: bad JSON"},
		{"two values", good + good[:len(good)-1] + good, "u.jsonl:2: bad JSON: more than one value"},
		{"missing image", `{"question": "q", "answer": "a"}`, `u.jsonl:1: missing or empty "image"`},
		{"empty answer", `{"image": "img/red.png", "question": "q", "answer": " "}`, `u.jsonl:1: missing or empty "answer"`},
		{"wrong type", `{"image": 3, "question": "q", "answer": "a"}`, "u.jsonl:1: bad JSON"},
		{"image not found", good + "\n" + `{"image": "img/none.png", "question": "q", "answer": "a"}`, "u.jsonl:3: image img/none.png: not found"},
		{"not an image", `{"image": "notes.txt", "question": "q", "answer": "a"}`, "u.jsonl:1: image notes.txt: not a PNG or JPEG image"},
		{"escaping path", `{"image": "../secret.png", "question": "q", "answer": "a"}`, "must be relative"},
		{"absolute path", `{"image": "/etc/passwd", "question": "q", "answer": "a"}`, "must be relative"},
		{"empty file", "\n\n", "u.jsonl: no examples"},
		{"long line", strings.Repeat("x", maxJSONLLine+1), "longer than"},
	} {
		_, err := ReadVQA(strings.NewReader(tc.in), "u.jsonl", fsys)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.desc, err, tc.want)
		}
	}
	if _, err := LoadVQA(filepath.Join(t.TempDir(), "none.jsonl"), ""); err == nil || !strings.Contains(err.Error(), "none.jsonl") {
		t.Errorf("missing file: got error %v, want one naming it", err)
	}
}

// FuzzReadVQA checks that the JSONL loader never panics and that every
// example it returns is well formed.
func FuzzReadVQA(f *testing.F) {
	fsys := userFS(f)
	f.Add(`{"image": "img/red.png", "question": "what is it ?", "answer": "red"}`)
	f.Add(`{"image": "img/black.jpg", "question": "q", "answer": "a"}` + "\n\n" + `{"image": "img/red.png", "question": "<image> x", "answer": "<eos>"}`)
	f.Add(`{"image": "notes.txt", "question": "q", "answer": "a"}`)
	f.Add(`{"image": "img/../img/red.png", "question": "q", "answer": "a"} {}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ReadVQA(strings.NewReader(in), "f.jsonl", fsys)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "datasets: f.jsonl") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, ex := range got {
			specials := 0
			for _, id := range append(append([]int(nil), ex.Prompt...), ex.Answer...) {
				if id != Unk && id < len(Specials) {
					specials++
				}
			}
			if specials != 3 { // <bos>, <image> and the final <eos>
				t.Fatalf("%d special tokens in %v %v, want 3", specials, ex.Prompt, ex.Answer)
			}
			if len(ex.Images) != 1 || len(ex.Images[0]) != ImageLen || len(ex.Prompt) < 2 || ex.Prompt[0] != BOS ||
				ex.Answer[len(ex.Answer)-1] != EOS {
				t.Fatalf("malformed example %+v", ex)
			}
		}
	})
}

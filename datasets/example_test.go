// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets_test

import (
	"fmt"
	"log"

	"github.com/repro-dp/repro/datasets"
)

func ExampleBuild() {
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	v := datasets.Vocab()
	for _, name := range datasets.SplitNames {
		fmt.Printf("%s: %d\n", name, len(d.Split(name)))
	}
	ex := d.Test[0]
	fmt.Printf("%s: %d image of %d values\n", ex.ID, len(ex.Images), len(ex.Images[0]))
	fmt.Printf("prompt %q\nanswer %q\ntext only %v\n", v.Decode(ex.Prompt), v.Decode(ex.Answer), ex.TextOnly)
	// Output:
	// public: 512
	// private: 277
	// holdout: 256
	// test: 256
	// fashion-vqa/test/0: 1 image of 2352 values
	// prompt "<bos> <image> the item is a bag . what is the item ?"
	// answer "bag <eos>"
	// text only true
}

func ExampleVocabulary_Encode() {
	v := datasets.Vocab()
	ids := v.Encode(nil, "<bos> <image> What is the item?")
	fmt.Println(ids[:2], v.Decode(ids))
	// Output:
	// [2 4] <bos> <image> what is the item ?
}

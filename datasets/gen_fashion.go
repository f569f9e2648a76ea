// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build ignore

// gen_fashion writes the embedded Fashion-MNIST subset from the full release:
//
//	go run gen_fashion.go [-src /usr/share/datasets/fashion-mnist]
//
// The subset is, for each class in label order, the first 700 images of that
// class in the training file followed by the first 100 of that class in the
// test file, in file order (training part first). It is a pure function of
// the release, so rerunning it reproduces the committed files bit for bit.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/repro-dp/repro/datasets"
)

func main() {
	src := flag.String("src", datasets.DefaultFashionDir, "directory of the full release")
	flag.Parse()
	f, err := datasets.LoadFashion(*src)
	if err != nil {
		log.Fatal(err)
	}
	img, lab, org := datasets.FashionSubset(f)
	write("data/fashion-mnist/subset-images-idx3-ubyte.gz", &datasets.IDX{Type: datasets.IDXUint8, Dims: []int{len(lab), 28, 28}, Uint8: img})
	write("data/fashion-mnist/subset-labels-idx1-ubyte.gz", &datasets.IDX{Type: datasets.IDXUint8, Dims: []int{len(lab)}, Uint8: lab})
	write("data/fashion-mnist/subset-origin-idx1-int.gz", &datasets.IDX{Type: datasets.IDXInt32, Dims: []int{len(lab)}, Int32: org})
}

func write(name string, x *datasets.IDX) {
	var raw bytes.Buffer
	if err := datasets.EncodeIDX(&raw, x); err != nil {
		log.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(name, gz.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d bytes, decoded sha256 %s\n", name, gz.Len(), x.Sum256())
}

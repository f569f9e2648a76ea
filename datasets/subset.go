// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

// FashionSubset selects the embedded subset from the full release f: for each
// class in label order, the first 700 images of that class in the training
// file, then the first 100 of that class in the test file, in file order. It
// returns the images, labels and origins of the selection. The embedded files
// were written from it by gen_fashion.go; a test checks they still agree.
func FashionSubset(f *Fashion) (images, labels []byte, origin []int32) {
	const fromTrain, fromTest = 700, 100
	for class := range uint8(10) {
		nTrain, nTest := 0, 0
		for i, l := range f.Labels {
			if l != class {
				continue
			}
			if f.Origin[i] < FashionTrainLen {
				if nTrain == fromTrain {
					continue
				}
				nTrain++
			} else {
				if nTest == fromTest {
					continue
				}
				nTest++
			}
			images = append(images, f.Images[i*784:(i+1)*784]...)
			labels = append(labels, l)
			origin = append(origin, f.Origin[i])
		}
	}
	return images, labels, origin
}

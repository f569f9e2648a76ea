// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package datasets provides the data of every repro task: real Fashion-MNIST
// images, synthetic shape scenes and personal-data records, one word-level
// vocabulary, and the six tasks built on them with their splits, canaries and
// federated partitions.
package datasets

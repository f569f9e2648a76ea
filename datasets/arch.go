// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

// taskArch is the architecture of the model each task is posed to: the
// generative tasks to TinyMLLM, image classification to the ViT, the
// federated image + caption classification to the fusion classifier. A
// test ties it to the task registry and to each task's Generative flag.
var taskArch = map[string]string{
	"fashion-vqa":   "tinymllm",
	"shapes-vqa":    "tinymllm",
	"records":       "tinymllm",
	"records-e2e":   "tinymllm",
	"records-echr":  "tinymllm",
	"icl":           "tinymllm",
	"fashion-cls":   "vit",
	"fashion-upper": "vit",
	"fl-mm":         "fusion",
}

// Arch returns the architecture of the model that task is posed to
// ("tinymllm", "vit" or "fusion"), or false for an unknown task. A method
// fine-tunes tasks of its own architecture only; the spec checker uses
// this to reject other pairs before anything runs.
func Arch(task string) (string, bool) {
	a, ok := taskArch[task]
	return a, ok
}

// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package optim provides first-order optimizers (SGD with momentum, Adam,
// AdamW) that can update a masked subset of the parameters, and learning-rate
// schedules (constant, cosine with linear warm-up, one-cycle).
//
// # Parameters
//
// An optimizer sees the trainable tensors of a model as a []Param: a name,
// the values Data and the gradient Grad, both flat float32 slices that the
// model owns. Step reads Grad and updates Data in place. The same parameters,
// in the same order, are passed to every Step of one optimizer; Step panics
// if they change. Optimizer state is float32, one or two buffers the length
// of Data per parameter; arithmetic inside a step is float64. A step over
// more than 65536 elements is split among GOMAXPROCS goroutines; every
// element is updated on its own with coefficients fixed beforehand, so the
// result is the same bits whatever GOMAXPROCS is. An optimizer is not safe
// for concurrent use.
//
// # Masked steps
//
// A *Mask says which parameters (Mask.Params) or which elements of a
// parameter (Mask.Elems) take part in a step. What is left out keeps its
// value and its optimizer state bit for bit: no moment decay, no step count
// (Dual-Priv's pruned blocks, which "get no update and no optimizer-moment
// update"). With Mask.Reset, the state of what is left out is reset to that
// of a fresh optimizer instead (SPARTA clears the momentum of masked groups).
// Adam counts steps per element once an element mask has been used, so an
// element that took part in k steps has bias correction 1 − β₁ᵏ whatever the
// other elements did: its trajectory equals that of Adam run on its own steps.
// The counts cost 4 bytes per element of the parameters concerned; whole
// parameter masks (Mask.Params) need none.
//
// # Schedules
//
// A Schedule maps a step number (0 for the first step) to a learning rate and
// depends on nothing else. OneCycle also gives the momentum to use at each
// step (MomentumSchedule); an optimizer takes it through SetMomentum
// (Momentumer). To cycle the momentum as PyTorch's OneCycleLR does by
// default (SGD's μ, Adam's β₁), before each step:
//
//	if ms, ok := sched.(optim.MomentumSchedule); ok {
//		opt.(optim.Momentumer).SetMomentum(ms.Momentum(step))
//	}
//
// Parameter groups with their own learning rate (SPARTA's classifier head)
// use Param.LRScale; groups without weight decay use Param.NoDecay.
//
// # Registries
//
// New builds an optimizer by name ("sgd", "adam", "adamw") and NewSchedule a
// schedule by name ("constant", "cosine", "onecycle"); Names and
// ScheduleNames list them.
//
//	opt, err := optim.New("adamw", params, &optim.Settings{WeightDecay: 0.01})
//	sched, err := optim.NewSchedule("cosine", &optim.ScheduleSettings{LR: 2e-4, Warmup: 10, Steps: 1000})
//	for step := range 1000 {
//		// ... fill params[i].Grad ...
//		opt.Step(params, sched.LR(step), nil)
//	}
//
// # Checkpoints
//
// State returns a deep copy of an optimizer's state and SetState restores
// one; State.Tensors and StateFromFile convert it to and from safetensors
// tensors, so that a run resumed from a checkpoint continues bit for bit.
//
// References:
//
//   - D. P. Kingma and J. Ba, Adam: A method for stochastic optimization,
//     ICLR 2015, Algorithm 1.
//   - I. Loshchilov and F. Hutter, Decoupled weight decay regularization,
//     ICLR 2019, Algorithm 2 (AdamW).
//   - I. Sutskever, J. Martens, G. Dahl and G. Hinton, On the importance of
//     initialization and momentum in deep learning, ICML 2013 (Nesterov
//     momentum, in the form PyTorch's SGD uses).
//   - L. N. Smith and N. Topin, Super-convergence: very fast training of
//     neural networks using large learning rates, 2019 (one-cycle policy,
//     as PyTorch's OneCycleLR with anneal_strategy='cos').
//   - I. Loshchilov and F. Hutter, SGDR: Stochastic gradient descent with warm
//     restarts, ICLR 2017 (cosine annealing).
package optim

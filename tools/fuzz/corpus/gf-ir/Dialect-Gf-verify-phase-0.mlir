// -gf-verify-phase=stage=S rejects, by name, every op the pipeline up to
// stage S should have lowered; applies over paged relations stay in Domain
// IR by design and are accepted at every stage.
//
// Without placement metadata, the task stage needs no tasks:

// Ten applies over non-paged relations, none over the paged one.
// ITER-COUNT-10: error: 'gf.apply' op should have been lowered by the iter stage (run -gf-lower-domain-to-iter)
// ITER-NOT: error

// KERNEL-COUNT-10: error: 'gf_iter.traverse' op should have been lowered by the kernel stage (run -gf-lower-iter-to-kernel)
// KERNEL-NOT: error

// SCHED-COUNT-10: error: 'gf_kernel.launch' op should have been scheduled by the scheduled stage (run -gf-select-kernel-schedule)
// SCHED-NOT: error

// TASK: distributed-plan.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'gf_kernel.launch' op should have been planned as tasks (its relation has placement metadata) by the task stage (run -gf-plan-distributed-tasks)

// BAD: error: unknown stage 'llvm'; expected domain, iter, kernel, scheduled or task

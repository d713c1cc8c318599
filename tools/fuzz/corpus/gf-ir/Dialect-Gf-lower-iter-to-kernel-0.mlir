// -gf-lower-iter-to-kernel binds each traversal to its relation's topology
// buffers (operands: topology first, then the field inputs), names the loop
// structure and copies the facts the schedule needs. No schedule yet.
//

// The relation stays: task planning reads its placement later.

// Unknown degree bounds stay unknown.

// Dense relations read no topology; every row has num_src neighbors.

// Triangular row i has i + 1 neighbors: 1..num_src.


// kNN rows have exactly k neighbors.

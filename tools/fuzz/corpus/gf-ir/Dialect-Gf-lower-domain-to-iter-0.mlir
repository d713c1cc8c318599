// -gf-lower-domain-to-iter picks the coordinate hierarchy from the relation's
// realization (materialized -> compressed-row, dense/triangular ->
// cartesian-product, radius -> generated-neighborhood, knn -> ranked-pairs)
// and leaves applies over paged relations in Domain IR.
//



// Paged relations stay in Domain IR.

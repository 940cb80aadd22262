package billing

// ProductsService keeps the catalog: products and their prices (SPEC "Products and prices").
type ProductsService service

"""`benchbook new` and `benchbook validate`: what raw files say about themselves, how runs
group into configurations, and the data folder written from them."""

"""Release gates as plain functions: residual-leak audits, independent second signals, data contracts
and the release text they read.
"""

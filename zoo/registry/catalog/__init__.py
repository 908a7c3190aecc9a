"""The models and boards that plugins register: the catalogue, the plugin loader, what a
plugin's failure and its load time say. Torch-free.
"""

"""vlmkit: a benchmark kit for vision-language models.

Importing this package has no side effects and pulls in no heavy dependency; see DESIGN in docs/.
"""

__version__ = "0.1.0"

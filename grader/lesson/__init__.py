"""What is particular to this lesson: its figures, the GPT-2 models and ground truth, and the interactive pictures."""

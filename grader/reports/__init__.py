"""What a graded class turns into beyond each student's own files: the reports an instructor reads."""

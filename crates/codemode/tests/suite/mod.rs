mod scripts;
